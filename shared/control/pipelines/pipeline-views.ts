import type { PipelineDefinition } from "../../pipeline/definition-schema.ts";
import type { PipelineRecord } from "../../store/pipelines-repository.ts";
import type { UpdateRecord } from "../../store/updates-repository.ts";
import { intentOf, isValidation } from "../updates/update-intent.ts";

/**
 * Pipelines as the API answers them (api.md "Pipelines"): the Databricks `GetPipelineResponse` fields
 * that apply, plus Ebb's `definition_version` and `rewind` status. Pure.
 */

/** The request shape of a definition: settings at the top, datasets under `definition`. */
export interface PipelineSpec {
  readonly name: string;
  readonly catalog: string;
  readonly schema: string;
  readonly configuration: Readonly<Record<string, string>>;
  readonly continuous: boolean;
  readonly definition: { readonly datasets: PipelineDefinition["datasets"] };
}

export function pipelineSpec(definition: PipelineDefinition): PipelineSpec {
  const { datasets, ...settings } = definition;
  return { ...settings, definition: { datasets } };
}

/** How many recent updates `latest_updates` lists. */
export const LATEST_UPDATES_SHOWN = 5;

function pipelineSummary(record: PipelineRecord) {
  return {
    pipeline_id: record.pipelineId,
    name: record.name,
    state: record.state,
    definition_version: record.definitionVersion,
    last_modified: record.lastModified,
    ...(record.activeUpdateId !== undefined ? { active_update_id: record.activeUpdateId } : {}),
  };
}

/** A listed pipeline: the Databricks `PipelineStateInfo` fields, with its latest updates. */
export function pipelineStatus(record: PipelineRecord, latest: readonly UpdateRecord[]) {
  return {
    ...pipelineSummary(record),
    latest_updates: latest.map((update) => ({
      update_id: update.updateId,
      state: update.state,
      creation_time: update.createdAt,
    })),
  };
}

export function pipelineDetails(
  record: PipelineRecord,
  definition: PipelineDefinition,
  latest: readonly UpdateRecord[],
  latestRewindPoint?: { readonly rewindPointId: string; readonly time: number },
) {
  return {
    ...pipelineStatus(record, latest),
    spec: pipelineSpec(definition),
    rewind: {
      blocked: record.rewindBlocked,
      ...(record.rewindBlockedBy !== undefined ? { blocked_by_update_id: record.rewindBlockedBy } : {}),
      ...(latestRewindPoint
        ? {
            latest_rewind_point: {
              rewind_point_id: latestRewindPoint.rewindPointId,
              timestamp: new Date(latestRewindPoint.time).toISOString(),
            },
          }
        : {}),
      ...rewoundState(latest),
    },
    ...(record.resetUnderWay
      ? {
          refresh_incomplete: {
            update_id: record.resetUnderWay.updateId,
            datasets: [...record.resetUnderWay.datasets],
            since: new Date(record.resetUnderWay.since).toISOString(),
          },
        }
      : {}),
  };
}

/**
 * A pipeline rewound and not run since: the newest completed update (validations and dry runs aside)
 * is a rewind. Until a run completes, the replay is pending: the tables hold the restored versions
 * and the flows continue from the point on the next update.
 */
export function rewoundState(latest: readonly UpdateRecord[]) {
  const last = latest.find((update) => {
    const intent = intentOf(update);
    return (
      update.state === "COMPLETED" && !isValidation(intent) && !(intent.kind === "rewind" && intent.dryRun)
    );
  });
  const intent = last && intentOf(last);
  if (!last || intent?.kind !== "rewind") return { rewound: false };
  return {
    rewound: true,
    replay_pending: true,
    rewound_by_update_id: last.updateId,
    rewound_at: new Date(last.endedAt ?? last.lastModified).toISOString(),
    ...(intent.target.kind === "point"
      ? { rewind_point_id: intent.target.rewindPointId }
      : { rewind_timestamp: intent.target.text }),
    ...(intent.datasets !== undefined ? { datasets: intent.datasets } : {}),
    message: "the pipeline was rewound; the next update replays from the rewind point",
  };
}
