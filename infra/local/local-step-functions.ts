import { StateMachine } from "aws-local-stepfunctions";
import type { FunctionHost } from "./function-host.ts";
import { LOCAL_ACCOUNT } from "./template-functions.ts";

/**
 * Step Functions, locally: the synthesized definition run by aws-local-stepfunctions, each Task's
 * Lambda ARN mapped to the same handler in process. Executions are kept by ARN for StopExecution and
 * DescribeExecution; a name is used once, as on AWS. What AWS would bill is counted (`usage`).
 */

// aws-local-stepfunctions 3 calls Promise.withResolvers (Node 22); Node 20 lacks it.
if (!("withResolvers" in Promise)) {
  Object.defineProperty(Promise, "withResolvers", {
    value: function withResolvers<T>() {
      let resolve!: (value: T) => void;
      let reject!: (reason: unknown) => void;
      const promise = new Promise<T>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      return { promise, resolve, reject };
    },
  });
}

export type ExecutionStatus = "RUNNING" | "SUCCEEDED" | "FAILED" | "ABORTED";

interface LocalExecution {
  readonly executionArn: string;
  readonly name: string;
  readonly startDate: Date;
  status: ExecutionStatus;
  stopDate?: Date;
  output?: unknown;
  error?: string;
  cause?: string;
  readonly abort: () => void;
  readonly done: Promise<void>;
}

export class ExecutionAlreadyExistsError extends Error {
  override readonly name = "ExecutionAlreadyExists";
}

export class ExecutionDoesNotExistError extends Error {
  override readonly name = "ExecutionDoesNotExist";
}

/**
 * What a Standard workflow is billed by, summed over every execution so far: state transitions (each
 * state entered, Map item processors' states included, and each retry), and the Lambda invocations
 * its tasks made (each attempt) with their time in process.
 */
export interface StepFunctionsUsage {
  readonly transitions: number;
  readonly lambdaInvocations: number;
  readonly lambdaMilliseconds: number;
}

export class LocalStepFunctions {
  readonly #machine: StateMachine;
  readonly #handlers: Record<string, (input: unknown) => Promise<unknown>>;
  readonly #executions = new Map<string, LocalExecution>();
  #transitions = 0;
  #lambdaInvocations = 0;
  #lambdaMilliseconds = 0;

  /**
   * `services`: the handler of each service integration the definition's tasks name by their
   * `Resource` (the Spark engine's `emr-serverless:startJobRun.sync`), called with the state's input
   * as its Parameters make it; a task naming one not given here is refused.
   */
  constructor(
    readonly stateMachineArn: string,
    definition: Record<string, unknown>,
    host: FunctionHost,
    services: Readonly<Record<string, ServiceTask>> = {},
  ) {
    this.#machine = new StateMachine(definition as never, { validationOptions: { checkArn: false } });
    this.#handlers = taskHandlers(definition, host, services, (ms) => {
      this.#lambdaInvocations++;
      this.#lambdaMilliseconds += ms;
    });
  }

  get usage(): StepFunctionsUsage {
    return {
      transitions: this.#transitions,
      lambdaInvocations: this.#lambdaInvocations,
      lambdaMilliseconds: this.#lambdaMilliseconds,
    };
  }

  start(name: string, input: unknown): { executionArn: string; startDate: Date } {
    const executionArn = `${this.stateMachineArn.replace(":stateMachine:", ":execution:")}:${name}`;
    if (this.#executions.has(executionArn)) {
      throw new ExecutionAlreadyExistsError(`Execution Already Exists: '${executionArn}'`);
    }
    const run = this.#machine.run(input as never, {
      overrides: { taskResourceLocalHandlers: this.#handlers as never },
      noThrowOnAbort: true,
      // What `$$` holds on AWS, as far as the definition reads it.
      context: {
        StateMachine: { Id: this.stateMachineArn, Name: this.stateMachineArn.split(":").at(-1) },
        Execution: { Id: executionArn, Name: name, StartTime: new Date().toISOString(), Input: input },
      } as never,
    });
    const execution: LocalExecution = {
      executionArn,
      name,
      startDate: new Date(),
      status: "RUNNING",
      abort: run.abort,
      done: Promise.all([
        run.result.then(
          (output) => {
            if (execution.status === "RUNNING") Object.assign(execution, { status: "SUCCEEDED", output });
            execution.stopDate ??= new Date();
          },
          (error: { name?: string; message?: string; cause?: unknown }) => {
            Object.assign(execution, {
              status: "FAILED",
              stopDate: new Date(),
              error: error.name,
              cause: error.message,
            });
          },
        ),
        this.#countTransitions(run.eventLogs),
      ]).then(() => undefined),
    };
    this.#executions.set(executionArn, execution);
    return { executionArn, startDate: execution.startDate };
  }

  stop(executionArn: string): Date {
    const execution = this.#get(executionArn);
    if (execution.status === "RUNNING") {
      execution.status = "ABORTED";
      execution.stopDate = new Date();
      execution.abort();
    }
    return execution.stopDate ?? new Date();
  }

  describe(executionArn: string) {
    const { status, startDate, stopDate, output, error, cause, name } = this.#get(executionArn);
    return {
      executionArn,
      stateMachineArn: this.stateMachineArn,
      name,
      status,
      startDate,
      stopDate,
      output,
      error,
      cause,
    };
  }

  /** Waits until no execution runs (for a clean stop). */
  async settled(): Promise<void> {
    await Promise.all([...this.#executions.values()].map((execution) => execution.done));
  }

  /** The log ends with the execution (succeeded, failed, aborted or timed out). */
  async #countTransitions(events: AsyncGenerator<{ type: string }>): Promise<void> {
    for await (const event of events) {
      if (event.type === "StateEntered" || event.type === "StateRetried") this.#transitions++;
    }
  }

  #get(executionArn: string): LocalExecution {
    const execution = this.#executions.get(executionArn);
    if (!execution) throw new ExecutionDoesNotExistError(`Execution Does Not Exist: '${executionArn}'`);
    return execution;
  }
}

/** A service integration's task, run locally: its answer is the state's result, its throw the state's error. */
export type ServiceTask = (input: unknown) => Promise<unknown>;

/** Task state name → the function its `Resource` ARN names (Map item processors included). */
function taskHandlers(
  definition: Record<string, unknown>,
  host: FunctionHost,
  services: Readonly<Record<string, ServiceTask>>,
  invoked: (ms: number) => void,
): Record<string, (input: unknown) => Promise<unknown>> {
  const handlers: Record<string, (input: unknown) => Promise<unknown>> = {};
  const visit = (states: Record<string, Record<string, unknown>>) => {
    for (const [name, state] of Object.entries(states)) {
      const service = state["Type"] === "Task" ? services[String(state["Resource"])] : undefined;
      if (service) handlers[name] = service;
      else if (state["Type"] === "Task") {
        const resource = String(state["Resource"]);
        const match = new RegExp(`^arn:aws:lambda:[^:]+:${LOCAL_ACCOUNT}:function:(.+)$`).exec(resource);
        if (!match || !host.has(match[1] as string))
          throw new Error(`task ${name} runs ${resource}, which is not a function of the stack`);
        const logicalId = match[1] as string;
        handlers[name] = async (input) => {
          const started = performance.now();
          try {
            return await host.invoke(logicalId, input);
          } finally {
            invoked(performance.now() - started);
          }
        };
      }
      const processor = (state["ItemProcessor"] ?? state["Iterator"]) as
        { States?: Record<string, Record<string, unknown>> } | undefined;
      if (processor?.States) visit(processor.States);
    }
  };
  visit(definition["States"] as Record<string, Record<string, unknown>>);
  return handlers;
}
