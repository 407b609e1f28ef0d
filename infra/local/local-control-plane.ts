import { randomBytes } from "node:crypto";
import path from "node:path";
import type { AwsEndpoints } from "../../shared/store/aws-clients.ts";
import { forgetControlPlane } from "../../functions/runtime/control-plane-from-env.ts";
import { ENVIRONMENT } from "../../functions/runtime/environment.ts";
import { startActivityStepFunctions } from "./activity-step-functions.ts";
import { serveApi } from "./api-server.ts";
import { routeLocalLog, type LocalLogOptions } from "./local-log.ts";
import { FunctionHost } from "./function-host.ts";
import { LocalStepFunctions, type ServiceTask } from "./local-step-functions.ts";
import type { SynthesizedEbb } from "./ebb-synthesis.ts";
import type { StorageNames } from "./provision-ebb.ts";
import { serveStepFunctions } from "./step-functions-endpoint.ts";
import {
  localStateMachineArn,
  templateFunctions,
  templateRoutes,
  templateSchedules,
  templateStateMachine,
  tokenResolver,
} from "./template-functions.ts";

/**
 * Ebb's control plane on one machine (architecture.md "Two ways to run, one stack"), over stand-ins
 * already running with the storage provisioned: the synthesized stack's functions in process, its
 * state machine definition run by aws-local-stepfunctions behind a Step Functions endpoint, its API
 * routes on 127.0.0.1 behind a bearer token, and its schedule on a timer. Or, with
 * `startControlPlaneOnActivities`, the same with the state machine on another Step Functions
 * (LocalStack's), its tasks served from this process as activities.
 */

export interface LocalControlPlaneOptions {
  readonly endpoints: Required<AwsEndpoints>;
  readonly storage: StorageNames;
  readonly ebb: SynthesizedEbb;
  /** @default a free port */
  readonly port?: number;
  /** @default a fresh random token */
  readonly token?: string;
  /** Fire the schedules (the hourly capture). @default true */
  readonly schedules?: boolean;
  /** The web UI's built files, served at `/`. @default no UI */
  readonly uiAssets?: string;
  /**
   * The folders of this machine that sources (and definition files) may be read from; any other local
   * path is refused with LOCAL_PATH_NOT_ALLOWED. `npm start` passes its landing folder and each
   * `--allow-local-path`.
   */
  readonly localRoots: readonly string[];
  /**
   * Where the functions' JSON log lines go (`npm start`: a file in the data folder). @default nowhere:
   * an embedded runtime (the tests, the demo, the benchmarks) keeps its output for its own.
   */
  readonly log?: LocalLogOptions;
  /**
   * Where lifecycle events are POSTed as JSON (docs/events.md; `npm start --webhook`). @default none:
   * the events are only in the pipelines' event logs.
   */
  readonly webhook?: string;
  /**
   * The service integrations the state machine's tasks name, by `Resource` (the Spark engine's EMR
   * Serverless job runs: infra/local/local-emr-serverless.ts), run in process. @default none
   */
  readonly serviceTasks?: Readonly<Record<string, ServiceTask>>;
}

/** A local control plane, wherever its state machine runs. */
export interface LocalControlPlaneBase {
  /** `http://127.0.0.1:<port>`: the API. */
  readonly endpoint: string;
  readonly token: string;
  /** The Step Functions API the functions start, stop and describe executions on. */
  readonly stepFunctionsEndpoint: string;
  /** The update state machine there. */
  readonly stateMachineArn: string;
  readonly host: FunctionHost;
  /** Stops serving, waits for running executions to end, and stops running them. */
  stop(): Promise<void>;
}

/** The local control plane with its state machine run in process. */
export interface LocalControlPlane extends LocalControlPlaneBase {
  readonly stepFunctions: LocalStepFunctions;
}

export async function startLocalControlPlane(options: LocalControlPlaneOptions): Promise<LocalControlPlane> {
  const stack = localStack(options);
  const stepFunctions = new LocalStepFunctions(
    localStateMachineArn(options.endpoints.region, stack.machine.logicalId),
    stack.machine.definition,
    stack.host,
    options.serviceTasks,
  );
  const sfnServer = await serveStepFunctions(stepFunctions, options.endpoints.credentials);
  const plane = await serveControlPlane(options, stack.host, {
    endpoint: sfnServer.endpoint,
    stateMachineArn: stepFunctions.stateMachineArn,
    stop: async () => {
      await stepFunctions.settled();
      await sfnServer.close();
    },
  });
  return { ...plane, stepFunctions };
}

/**
 * The local control plane with its state machine on the Step Functions at `stepFunctionsEndpoint`
 * (signed with the stand-ins' credentials), its tasks activities this process serves
 * (activity-step-functions.ts).
 */
export async function startControlPlaneOnActivities(
  options: LocalControlPlaneOptions & { readonly stepFunctionsEndpoint: string },
): Promise<LocalControlPlaneBase> {
  const stack = localStack(options);
  const machine = await startActivityStepFunctions({
    endpoint: options.stepFunctionsEndpoint,
    aws: options.endpoints,
    logicalId: stack.machine.logicalId,
    definition: stack.machine.definition,
    host: stack.host,
  });
  try {
    return await serveControlPlane(options, stack.host, {
      endpoint: options.stepFunctionsEndpoint,
      stateMachineArn: machine.stateMachineArn,
      stop: () => machine.stop(),
    });
  } catch (error) {
    await machine.stop();
    throw error;
  }
}

/** The template's functions (hosted here) and its state machine, every token resolved. */
function localStack(options: LocalControlPlaneOptions) {
  const { template, logicalIds } = options.ebb;
  const physicalNames = Object.fromEntries(
    (Object.keys(logicalIds) as (keyof StorageNames)[]).map((role) => [
      logicalIds[role],
      options.storage[role],
    ]),
  );
  const resolve = tokenResolver(template, physicalNames, options.endpoints.region);
  return {
    host: new FunctionHost(templateFunctions(template, resolve)),
    machine: templateStateMachine(template, resolve),
  };
}

/** The functions' environment, the API and the schedules, over a state machine already running. */
async function serveControlPlane(
  options: LocalControlPlaneOptions,
  host: FunctionHost,
  machine: { readonly endpoint: string; readonly stateMachineArn: string; stop(): Promise<void> },
): Promise<LocalControlPlaneBase> {
  const { template } = options.ebb;
  const { region } = options.endpoints;
  host.applyEnvironment();
  Object.assign(process.env, {
    AWS_REGION: region,
    AWS_ACCESS_KEY_ID: options.endpoints.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: options.endpoints.credentials.secretAccessKey,
    AWS_ENDPOINT_URL_S3: options.endpoints.s3Endpoint,
    AWS_ENDPOINT_URL_DYNAMODB: options.endpoints.dynamoDbEndpoint,
    [ENVIRONMENT.stepFunctionsEndpoint]: machine.endpoint,
    // The template's ARN, unless the machine runs elsewhere under a name of its own.
    [ENVIRONMENT.stateMachineArn]: machine.stateMachineArn,
    [ENVIRONMENT.localRoots]: JSON.stringify(options.localRoots.map((root) => path.resolve(root))),
    // No event bus locally (the template's resolves to none): lifecycle events go to the webhook.
    [ENVIRONMENT.eventBus]: "",
    [ENVIRONMENT.eventsWebhook]: options.webhook ?? "",
  });
  // The functions' control plane is made again from this environment (a runtime before this one in
  // the process left clients naming its own endpoints).
  forgetControlPlane();

  const token = options.token ?? randomBytes(24).toString("base64url");
  const restoreLog = routeLocalLog(options.log ?? {});
  const api = await serveApi({
    routes: templateRoutes(template),
    host,
    token,
    ...(options.port !== undefined ? { port: options.port } : {}),
    ...(options.uiAssets !== undefined ? { uiAssets: options.uiAssets } : {}),
  });

  const timers =
    (options.schedules ?? true)
      ? templateSchedules(template).map((schedule) =>
          setInterval(() => {
            host
              .invoke(schedule.functionId, {
                source: "aws.events",
                "detail-type": "Scheduled Event",
                detail: {},
              })
              .catch((error: unknown) => console.error(`scheduled ${schedule.functionId} failed:`, error));
          }, schedule.intervalMs).unref(),
        )
      : [];

  return {
    endpoint: api.endpoint,
    token,
    stepFunctionsEndpoint: machine.endpoint,
    stateMachineArn: machine.stateMachineArn,
    host,
    stop: async () => {
      for (const timer of timers) clearInterval(timer);
      await api.close();
      await machine.stop();
      restoreLog();
    },
  };
}
