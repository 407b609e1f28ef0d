import { randomBytes } from "node:crypto";
import {
  CreateActivityCommand,
  CreateStateMachineCommand,
  DeleteActivityCommand,
  DeleteStateMachineCommand,
  GetActivityTaskCommand,
  ListExecutionsCommand,
  SendTaskFailureCommand,
  SendTaskSuccessCommand,
  SFNClient,
} from "@aws-sdk/client-sfn";
import { setTimeout as sleep } from "node:timers/promises";
import type { AwsEndpoints } from "../../shared/store/aws-clients.ts";
import { taskFunctionIds, withActivityTasks } from "./activity-tasks.ts";
import type { FunctionHost } from "./function-host.ts";
import { LOCAL_ACCOUNT } from "./template-functions.ts";

/**
 * The update state machine on a real Step Functions implementation that cannot invoke this process's
 * functions (LocalStack's provider: its Lambda needs Docker), its task states served from here as
 * activities:
 *
 * 1. An activity per function the tasks invoke, and the state machine with each task pointed at its
 *    function's activity (activity-tasks.ts), all named afresh: several local control planes can
 *    share one Step Functions without taking each other's tasks.
 * 2. A long poll (GetActivityTask) per activity. Each task handed out runs the function's handler
 *    here, not awaited (a Map's items run side by side), and is answered with SendTaskSuccess (what
 *    the handler returned) or SendTaskFailure with the error's name, which Retry and Catch match on,
 *    and a cause shaped as Lambda's (`{"errorType","errorMessage","trace"}`), which the Catch path
 *    reads the error's code from.
 * 3. Stopping waits until no execution of the machine runs (as the in-process runner's `settled`
 *    does), then ends the polls, waits for the tasks in hand, and deletes the machine and activities.
 */

export interface ActivityStepFunctions {
  readonly stateMachineArn: string;
  stop(): Promise<void>;
}

export interface ActivityStepFunctionsOptions {
  /** The Step Functions API, and the credentials and region to sign for it with. */
  readonly endpoint: string;
  readonly aws: Pick<AwsEndpoints, "region" | "credentials">;
  /** The state machine's logical id in the template (its name starts with it). */
  readonly logicalId: string;
  /** The synthesized definition, tokens resolved, tasks still naming the stack's functions. */
  readonly definition: Record<string, unknown>;
  readonly host: FunctionHost;
}

/** Step Functions accepts any role locally; AWS would check it. */
const ROLE_ARN = `arn:aws:iam::${LOCAL_ACCOUNT}:role/ebb-local-step-functions`;
/** How often stopping asks whether an execution still runs. */
const SETTLE_POLL_MS = 200;
/** After a failed poll (the service restarting), before the next. */
const POLL_BACKOFF_MS = 1_000;
/** SendTaskFailure's limits on an error's name and its cause. */
const MAX_ERROR_CHARS = 256;
const MAX_CAUSE_CHARS = 32_768;

export async function startActivityStepFunctions(
  options: ActivityStepFunctionsOptions,
): Promise<ActivityStepFunctions> {
  const client = new SFNClient({
    endpoint: options.endpoint,
    region: options.aws.region,
    credentials: options.aws.credentials,
  });
  const suffix = randomBytes(4).toString("hex");
  const activityArns = new Map<string, string>();
  for (const functionId of taskFunctionIds(options.definition)) {
    const created = await client.send(new CreateActivityCommand({ name: `ebb-${suffix}-${functionId}` }));
    activityArns.set(functionId, created.activityArn as string);
  }
  const { stateMachineArn } = await client.send(
    new CreateStateMachineCommand({
      name: `${options.logicalId}-${suffix}`,
      roleArn: ROLE_ARN,
      type: "STANDARD",
      definition: JSON.stringify(withActivityTasks(options.definition, activityArns)),
    }),
  );

  const polls = new AbortController();
  const inHand = new Set<Promise<void>>();
  const workerName = `ebb-local-${process.pid}`;
  const serve = async (functionId: string, activityArn: string): Promise<void> => {
    while (!polls.signal.aborted) {
      let task;
      try {
        task = await client.send(new GetActivityTaskCommand({ activityArn, workerName }), {
          abortSignal: polls.signal,
        });
      } catch (error) {
        if (polls.signal.aborted) return;
        console.error(`polling ${activityArn} failed, polling again:`, error);
        await sleep(POLL_BACKOFF_MS);
        continue;
      }
      const { taskToken, input } = task;
      if (!taskToken) continue;
      const running = answer(client, taskToken, () =>
        options.host.invoke(functionId, JSON.parse(input ?? "{}")),
      ).finally(() => inHand.delete(running));
      inHand.add(running);
    }
  };
  const pollers = [...activityArns].map(([functionId, arn]) => serve(functionId, arn));

  return {
    stateMachineArn: stateMachineArn as string,
    stop: async () => {
      for (;;) {
        const { executions } = await client.send(
          new ListExecutionsCommand({ stateMachineArn, statusFilter: "RUNNING", maxResults: 1 }),
        );
        if (!executions?.length) break;
        await sleep(SETTLE_POLL_MS);
      }
      polls.abort();
      await Promise.all(pollers);
      await Promise.all(inHand);
      await client.send(new DeleteStateMachineCommand({ stateMachineArn }));
      for (const activityArn of activityArns.values()) {
        await client.send(new DeleteActivityCommand({ activityArn }));
      }
      client.destroy();
    },
  };
}

/** Runs one task and reports how it ended; a report that cannot be sent is logged (the task then times out). */
async function answer(client: SFNClient, taskToken: string, run: () => Promise<unknown>): Promise<void> {
  try {
    let output: unknown;
    try {
      output = await run();
    } catch (error) {
      const { name, message, stack } = error instanceof Error ? error : new Error(String(error));
      await client.send(
        new SendTaskFailureCommand({
          taskToken,
          error: name.slice(0, MAX_ERROR_CHARS),
          cause: lambdaCause(name, message, stack),
        }),
      );
      return;
    }
    await client.send(new SendTaskSuccessCommand({ taskToken, output: JSON.stringify(output ?? null) }));
  } catch (error) {
    console.error("could not report an activity task's outcome:", error);
  }
}

/** The cause Lambda hands Step Functions for a thrown error, cut to SendTaskFailure's limit. */
function lambdaCause(name: string, message: string, stack: string | undefined): string {
  let errorMessage = message;
  let trace = stack?.split("\n") ?? [];
  for (;;) {
    const cause = JSON.stringify({ errorType: name, errorMessage, trace });
    if (cause.length <= MAX_CAUSE_CHARS) return cause;
    if (trace.length > 0) trace = [];
    else errorMessage = errorMessage.slice(0, Math.floor(errorMessage.length / 2));
  }
}
