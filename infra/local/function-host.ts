import { randomUUID } from "node:crypto";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { Context } from "aws-lambda";
import { TASK_TIMEOUT_SECONDS } from "../../shared/control/updates/update-tasks.ts";
import { PROJECT_ROOT } from "../aws/function-defaults.ts";
import { ProvisioningError } from "./errors.ts";
import type { LocalFunction } from "./template-functions.ts";

/**
 * The stack's Lambda functions, run in this process: each handler module is imported from source on
 * first use and called with a Lambda-shaped context, exactly as Lambda calls the bundled one. The
 * functions' environment variables (the same names and resolved values the template gives each
 * function) are set on this process once; locally one process plays every function.
 */

/** What a local invocation may take, like a Lambda timeout (the same as the stack's task functions). */
export const LOCAL_TIMEOUT_MS = TASK_TIMEOUT_SECONDS * 1000;

type Handler = (event: unknown, context: Context) => Promise<unknown>;

export class FunctionHost {
  readonly #functions: ReadonlyMap<string, LocalFunction>;
  readonly #loaded = new Map<string, Promise<Handler>>();

  constructor(functions: readonly LocalFunction[]) {
    this.#functions = new Map(functions.map((fn) => [fn.logicalId, fn]));
  }

  /** Every function's variables on this process (they agree: one table, bucket, state machine each). */
  applyEnvironment(env: NodeJS.ProcessEnv = process.env): void {
    for (const fn of this.#functions.values()) Object.assign(env, fn.environment);
  }

  has(logicalId: string): boolean {
    return this.#functions.has(logicalId);
  }

  async invoke(logicalId: string, event: unknown): Promise<unknown> {
    const handler = await this.#handler(logicalId);
    const started = Date.now();
    const context = {
      callbackWaitsForEmptyEventLoop: false,
      functionName: logicalId,
      functionVersion: "$LATEST",
      invokedFunctionArn: logicalId,
      memoryLimitInMB: "2048",
      awsRequestId: randomUUID(),
      logGroupName: `/aws/lambda/${logicalId}`,
      logStreamName: "local",
      getRemainingTimeInMillis: () => Math.max(0, LOCAL_TIMEOUT_MS - (Date.now() - started)),
      done: () => undefined,
      fail: () => undefined,
      succeed: () => undefined,
    } satisfies Context;
    return handler(event, context);
  }

  #handler(logicalId: string): Promise<Handler> {
    let loading = this.#loaded.get(logicalId);
    if (!loading) {
      const fn = this.#functions.get(logicalId);
      if (!fn) throw new ProvisioningError(`the stack has no function ${logicalId}`);
      loading = import(pathToFileURL(path.join(PROJECT_ROOT, fn.entry)).href).then(
        (module: { handler?: Handler }) => {
          if (typeof module.handler !== "function")
            throw new ProvisioningError(`${fn.entry} exports no handler`);
          return module.handler;
        },
      );
      this.#loaded.set(logicalId, loading);
    }
    return loading;
  }
}
