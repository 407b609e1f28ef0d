import { randomBytes } from "node:crypto";
import path from "node:path";
import type { AwsEndpoints } from "../../shared/store/aws-clients.ts";
import { ENVIRONMENT } from "../../functions/runtime/environment.ts";
import { serveApi } from "./api-server.ts";
import { FunctionHost } from "./function-host.ts";
import { LocalStepFunctions } from "./local-step-functions.ts";
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
 * routes on 127.0.0.1 behind a bearer token, and its schedule on a timer.
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
}

export interface LocalControlPlane {
  /** `http://127.0.0.1:<port>`: the API. */
  readonly endpoint: string;
  readonly token: string;
  readonly stepFunctions: LocalStepFunctions;
  readonly stepFunctionsEndpoint: string;
  readonly host: FunctionHost;
  /** Stops serving, stops running executions, and waits for them. */
  stop(): Promise<void>;
}

export async function startLocalControlPlane(options: LocalControlPlaneOptions): Promise<LocalControlPlane> {
  const { template, logicalIds } = options.ebb;
  const { region } = options.endpoints;
  const physicalNames = Object.fromEntries(
    (Object.keys(logicalIds) as (keyof StorageNames)[]).map((role) => [
      logicalIds[role],
      options.storage[role],
    ]),
  );
  const resolve = tokenResolver(template, physicalNames, region);
  const host = new FunctionHost(templateFunctions(template, resolve));
  const machine = templateStateMachine(template, resolve);
  const stepFunctions = new LocalStepFunctions(
    localStateMachineArn(region, machine.logicalId),
    machine.definition,
    host,
  );
  const sfnServer = await serveStepFunctions(stepFunctions, options.endpoints.credentials);

  host.applyEnvironment();
  Object.assign(process.env, {
    AWS_REGION: region,
    AWS_ACCESS_KEY_ID: options.endpoints.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: options.endpoints.credentials.secretAccessKey,
    AWS_ENDPOINT_URL_S3: options.endpoints.s3Endpoint,
    AWS_ENDPOINT_URL_DYNAMODB: options.endpoints.dynamoDbEndpoint,
    [ENVIRONMENT.stepFunctionsEndpoint]: sfnServer.endpoint,
    [ENVIRONMENT.localRoots]: JSON.stringify(options.localRoots.map((root) => path.resolve(root))),
  });

  const token = options.token ?? randomBytes(24).toString("base64url");
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
    stepFunctions,
    stepFunctionsEndpoint: sfnServer.endpoint,
    host,
    stop: async () => {
      for (const timer of timers) clearInterval(timer);
      await api.close();
      await stepFunctions.settled();
      await sfnServer.close();
    },
  };
}
