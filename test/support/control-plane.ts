import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { loadSynthesizedEbb } from "../../infra/local/ebb-synthesis-cache.ts";
import type { SynthesizedEbb } from "../../infra/local/ebb-synthesis.ts";
import type { ServiceTask } from "../../infra/local/local-step-functions.ts";
import {
  startControlPlaneOnActivities,
  startLocalControlPlane,
  type LocalControlPlane,
  type LocalControlPlaneBase,
} from "../../infra/local/local-control-plane.ts";
import type { LocalLogOptions } from "../../infra/local/local-log.ts";
import { EbbClient } from "../../shared/client/ebb-client.ts";
import { bearerAuth } from "../../shared/client/request-signer.ts";
import { testAws } from "./aws.ts";

/**
 * The local control plane (API, state machine, functions in process) over the run's stand-ins, with a
 * client holding its token and a landing folder for auto_loader sources. On a backend with a Step
 * Functions of its own (`localstack-host`) the update state machine runs there, its tasks served from
 * this process as activities, unless `inProcessStepFunctions` asks for the in-process runner (a test
 * that reads what that runner counts).
 */
export interface TestControlPlane<Plane extends LocalControlPlaneBase = LocalControlPlaneBase> {
  readonly plane: Plane;
  readonly client: EbbClient;
  /** An absolute folder auto_loader flows can read. */
  readonly landing: string;
  /** Writes JSON lines into the landing folder. */
  land(file: string, rows: readonly Record<string, unknown>[]): Promise<void>;
  close(): Promise<void>;
}

interface TestControlPlaneOptions {
  readonly uiAssets?: string;
  readonly inProcessStepFunctions?: boolean;
  /**
   * The folders local sources may read (the landing folder is made under the first).
   * @default [os.tmpdir()]
   */
  readonly localRoots?: readonly string[];
  /** Where the functions' JSON log lines go. @default stdout */
  readonly log?: LocalLogOptions;
  /** Where lifecycle events are POSTed (docs/events.md). @default none */
  readonly webhook?: string;
  /** Another synthesis of the stack (other construct props). @default the default stack's */
  readonly ebb?: SynthesizedEbb;
  /** Service integrations the state machine's tasks name, run in process (implies the in-process runner). */
  readonly serviceTasks?: Readonly<Record<string, ServiceTask>>;
}

export async function startTestControlPlane(
  options: TestControlPlaneOptions & { readonly inProcessStepFunctions: true },
): Promise<TestControlPlane<LocalControlPlane>>;
export async function startTestControlPlane(options?: TestControlPlaneOptions): Promise<TestControlPlane>;
export async function startTestControlPlane(
  options: TestControlPlaneOptions = {},
): Promise<TestControlPlane> {
  const aws = testAws();
  const { inProcessStepFunctions = options.serviceTasks !== undefined, ebb, ...rest } = options;
  const settings = {
    endpoints: aws.endpoints,
    storage: aws.storage,
    ebb: ebb ?? (await loadSynthesizedEbb()),
    schedules: false,
    // Tests land files in fresh temporary folders (and write definition files beside them).
    localRoots: [os.tmpdir()],
    ...rest,
  };
  const plane =
    aws.stepFunctionsEndpoint === undefined || inProcessStepFunctions
      ? await startLocalControlPlane(settings)
      : await startControlPlaneOnActivities({
          ...settings,
          stepFunctionsEndpoint: aws.stepFunctionsEndpoint,
        });
  const landing = await mkdtemp(path.join(settings.localRoots[0] ?? os.tmpdir(), "ebb-landing-"));
  return {
    plane,
    client: new EbbClient({ endpoint: plane.endpoint, auth: bearerAuth(plane.token) }),
    landing,
    land: (file, rows) =>
      writeFile(path.join(landing, file), rows.map((row) => JSON.stringify(row)).join("\n") + "\n"),
    close: async () => {
      await plane.stop();
      await rm(landing, { recursive: true, force: true });
    },
  };
}

/**
 * A create body for the smallest pipeline: one streaming table `raw` whose flow `ingest` runs `sql`
 * over JSON files `{id}` landing under `path`.
 */
export function ingestPipeline(settings: {
  name: string;
  catalog: string;
  schema: string;
  path: string;
  sql?: string;
}) {
  const { path: sourcePath, sql = "SELECT * FROM source", ...names } = settings;
  return {
    ...names,
    definition: {
      datasets: [
        {
          type: "streaming_table",
          name: "raw",
          flows: [
            {
              name: "ingest",
              source: { type: "auto_loader", path: sourcePath, format: "json", schema: { id: "BIGINT" } },
              sql,
            },
          ],
        },
      ],
    },
  };
}

/**
 * `count` idle ingest pipelines, each with tables of its own (`<catalog>.listing_<i>.raw`): enough
 * pipelines for a listing in small pages to span several. Answers their ids; purge them when done.
 */
export async function createIngestPipelines(
  cp: TestControlPlane,
  count: number,
  catalog: string,
): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const body = ingestPipeline({ name: `listing ${i}`, catalog, schema: `listing_${i}`, path: cp.landing });
    ids.push((await cp.client.createPipeline(body)).pipeline_id);
  }
  return ids;
}

/** `update` as it finished; a failed one first prints why (its error events' exceptions) in the test output. */
export async function explainedUpdate<U extends { state: string; update_id: string }>(
  client: EbbClient,
  pipelineId: string,
  update: U,
): Promise<U> {
  if (update.state !== "FAILED") return update;
  const { events } = await client.events(pipelineId, {
    filter: `level = 'ERROR' AND origin.update_id = '${update.update_id}'`,
  });
  console.error(
    `update ${update.update_id} failed:`,
    JSON.stringify(events.map((e) => (e as { error?: unknown }).error ?? e.details)),
  );
  return update;
}

/** Starts an update of `pipelineId` with `body` and waits for it to finish (explainedUpdate). */
export async function runExplainedUpdate(client: EbbClient, pipelineId: string, body?: unknown) {
  const { update_id } = await client.startUpdate(pipelineId, body);
  return explainedUpdate(
    client,
    pipelineId,
    await client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 }),
  );
}
