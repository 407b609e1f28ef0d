import { DEFAULT_ENGINE } from "../../pipeline/pipeline-settings.ts";
import type { BatchEngine } from "../../pipeline/pipeline-settings.ts";
import type { DatasetCatalog } from "../dataset-catalog.ts";
import { readViewsOf, sparkUnsupported } from "./engine-choice.ts";
import type { SparkWork } from "./errors.ts";
import { viewSparkUnsupported } from "./view-engine-choice.ts";

/**
 * The first flow or materialized view an update runs (`run`, its flows narrowed to `runFlows` when
 * it selected flows) that Spark cannot run when everything is to run on Spark (the update's `engine`,
 * or `pipelines.engine = spark`), with why; undefined when all can, or when the engine is DuckDB or
 * `auto` (which keeps such a flow or view on DuckDB). Asked at start and at `validate_only`, so the
 * update is refused before any batch commits, not half-way when the view's turn comes. A view kept
 * incrementally always refreshes on DuckDB (view-engine-choice.ts) and is never refused.
 */
export function firstRefusedBySpark(
  catalog: DatasetCatalog,
  plan: { readonly run: readonly string[]; readonly runFlows?: readonly string[] },
  override: BatchEngine | undefined,
): { readonly flow: string; readonly kind: SparkWork; readonly reason: string } | undefined {
  const setting = override
    ? { kind: "fixed", engine: override }
    : (catalog.pipeline.settings.engine ?? DEFAULT_ENGINE);
  if (setting.kind !== "fixed" || setting.engine !== "spark") return undefined;
  const pipeline = catalog.pipeline.definition;
  for (const name of plan.run) {
    const dataset = pipeline.datasets.find((d) => d.name === name);
    if (dataset?.type === "materialized_view") {
      if (catalog.viewPlan(name).kind === "incremental") continue;
      const reason = viewSparkUnsupported({ pipeline, view: dataset, readViews: readViewsOf(catalog, name) });
      if (reason) return { flow: name, kind: "materialized view", reason };
    }
    if (dataset?.type !== "streaming_table") continue;
    for (const flow of dataset.flows) {
      if (plan.runFlows && !plan.runFlows.includes(flow.name)) continue;
      const reason = sparkUnsupported({
        pipeline,
        dataset,
        flow,
        readViews: readViewsOf(catalog, dataset.name, flow.name),
      });
      if (reason) return { flow: flow.name, kind: "flow", reason };
    }
  }
  return undefined;
}
