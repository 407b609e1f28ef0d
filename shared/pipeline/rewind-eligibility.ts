import type { DefinitionIssue } from "./errors.ts";
import type { PipelineDefinition } from "./definition-schema.ts";
import type { PipelineSettings } from "./pipeline-settings.ts";
import { describeInterval, parseInterval } from "./duration.ts";

/**
 * While rewind is on, a definition with a flow that cannot be rewound is rejected, naming the flow and
 * why (semantics.md "Pipeline, datasets, flows"). The rules, kept few on purpose:
 *
 * 1. The written table has `delta.appendOnly = true`: a rewind commits a RESTORE, which removes
 *    files, and Delta refuses any removal on an append-only table.
 * 2. The written table keeps its log (`delta.logRetentionDuration`) or its removed files
 *    (`delta.deletedFileRetentionDuration`) for less time than rewind points live: a live point could
 *    name a version the table can no longer restore.
 *
 * Not rules, on purpose: every source type is rewindable — `stream` and `delta` offsets are table
 * versions, and `auto_loader` offsets are the processed-file set in Ebb's own state store. Whether the
 * source still holds the data a given point needs (files deleted, an external table vacuumed) depends
 * on the point, so the rewind checks it then (`BEYOND_RETENTION`), not the definition.
 */
export function rewindIssues(definition: PipelineDefinition, settings: PipelineSettings): DefinitionIssue[] {
  if (!settings.rewindEnabled) return [];
  const issues: DefinitionIssue[] = [];
  definition.datasets.forEach((dataset, d) => {
    if (dataset.type === "view") return;
    const writers =
      dataset.type === "streaming_table"
        ? dataset.flows.map((flow) => `flow "${flow.name}" (writes "${dataset.name}")`)
        : [`materialized view "${dataset.name}"`];
    const properties = dataset.properties ?? {};
    const reject = (property: string, why: string) => {
      for (const writer of writers) {
        issues.push({
          path: `datasets[${d}].properties[${JSON.stringify(property)}]`,
          message: `${writer} cannot be rewound while rewind is enabled: ${why}`,
        });
      }
    };

    if (properties["delta.appendOnly"]?.trim().toLowerCase() === "true") {
      reject(
        "delta.appendOnly",
        "the table is append-only, and a rewind restores it with a commit that removes files; remove delta.appendOnly or turn rewind off",
      );
    }
    for (const property of ["delta.logRetentionDuration", "delta.deletedFileRetentionDuration"]) {
      const value = properties[property];
      if (value === undefined) continue;
      const kept = parseInterval(value);
      if (kept === undefined) {
        reject(property, `${JSON.stringify(value)} is not a duration such as "interval 30 days"`);
      } else if (kept < settings.rewindRetentionMs) {
        reject(
          property,
          `the table keeps history for ${describeInterval(kept)}, less than the ${describeInterval(settings.rewindRetentionMs)} rewind points live; raise it to at least that, or shorten pipelines.rewind.retention`,
        );
      }
    }
  });
  return issues;
}
