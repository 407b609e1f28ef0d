import { CodedError } from "../../errors/coded-error.ts";
import type { UpdateError } from "../../store/updates-repository.ts";

/**
 * A task's error on its way through Step Functions, which keeps only an error's name and message:
 * the task puts the error's code in front of its message (`codedMessage`), and the Catch path reads
 * the code back out of the cause (`describeCaught`).
 */

/** The error a Catch hands over (`States.*` or a task's error name, and its cause). */
export interface CaughtError {
  readonly Error?: string;
  readonly Cause?: string;
}

/**
 * A task's error as Step Functions hands it over. On Lambda the cause is
 * `{"errorType","errorMessage","trace"}` as JSON; locally it is the message. Task handlers put a
 * domain error's code in front of its message (`[PIPELINE_BUSY] …`, see `codedMessage`) because
 * Lambda keeps no other field of an error.
 */
export function describeCaught(caught: CaughtError): UpdateError {
  let text = caught.Cause ?? caught.Error ?? "the update failed";
  try {
    const cause = JSON.parse(text) as { errorMessage?: unknown };
    if (typeof cause.errorMessage === "string") text = cause.errorMessage;
  } catch {
    // not JSON: the message itself
  }
  const coded = CODED.exec(text);
  return coded
    ? { errorCode: coded[1] as string, message: coded[2] as string }
    : { errorCode: "INTERNAL_ERROR", message: text };
}

const CODED = /^\[([A-Z][A-Z0-9_.]*)\] ([\s\S]*)$/;

/** `[ERROR_CODE] message` for an error that carries an `errorCode`, else the message. */
export function codedMessage(error: Error): string {
  const code = (error as { errorCode?: unknown }).errorCode;
  return typeof code === "string" && !error.message.startsWith("[")
    ? `[${code}] ${error.message}`
    : error.message;
}

/** The error a task throws for `error`: same name (Retry and Catch match on it), coded message. */
export function codedTaskError(error: Error): Error {
  const message = codedMessage(error);
  if (message === error.message) return error;
  const coded = new Error(message, { cause: error });
  coded.name = error.name;
  if (error.stack) coded.stack = error.stack;
  return coded;
}

/**
 * Not a failure: RunFlow's time budget ran out with batches left. The state machine's Retry on this
 * name (`RUN_BUDGET_RETRY`) invokes the item again, and it resumes where its last batch ended.
 */
export class RunBudgetSpentError extends CodedError {
  override readonly name = "RunBudgetSpentError";

  constructor(dataset: string, flow: string | undefined) {
    super(
      `${flow ? `flow ${flow} of ` : ""}${dataset} has batches left after its time budget; it runs on in a new invocation`,
    );
  }
}
