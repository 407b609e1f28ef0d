import { CodedError } from "../../../errors/coded-error.ts";
import type { UpdateError } from "../../../store/updates-repository.ts";

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
  const limit = functionLimitOf(caught);
  if (limit) return { errorCode: FUNCTION_LIMIT_CODES[limit], message: FUNCTION_LIMIT_MESSAGES[limit] };
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

/** What a task function ran out of. */
export type FunctionLimit = "time" | "memory";

/**
 * Lambda's and Step Functions' names for a task function that ran out of time (the task's
 * TimeoutSeconds: `States.Timeout`; Lambda's own timeout: `Sandbox.Timedout`, or an error whose
 * message says `Task timed out`) or memory (`Runtime.OutOfMemory`; a process killed by the kernel
 * for its memory: `Runtime.ExitError` "signal: killed").
 */
export function functionLimitOf(caught: CaughtError): FunctionLimit | undefined {
  const name = caught.Error ?? "";
  if (name === "States.Timeout" || name === "Sandbox.Timedout") return "time";
  if (name === "Runtime.OutOfMemory") return "memory";
  const cause = caught.Cause ?? "";
  if (/Task timed out after/.test(cause)) return "time";
  if (/Runtime\.OutOfMemory|Runtime exited with error: signal: killed/.test(cause)) return "memory";
  return undefined;
}

export const FUNCTION_LIMIT_CODES: Readonly<Record<FunctionLimit, string>> = {
  time: "FUNCTION_TIMEOUT",
  memory: "FUNCTION_OUT_OF_MEMORY",
};

const FUNCTION_LIMIT_MESSAGES: Readonly<Record<FunctionLimit, string>> = {
  time: "a task function ran past its timeout: give the task functions a longer taskTimeout (EbbProps, up to 900 seconds)",
  memory:
    "a task function ran out of memory: give the task functions more taskMemorySize (EbbProps, up to 10,240 MB)",
};

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
