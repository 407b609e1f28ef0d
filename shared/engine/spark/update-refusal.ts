import { DEFAULT_ENGINE } from "../../pipeline/pipeline-settings.ts";
import type { BatchEngine } from "../../pipeline/pipeline-settings.ts";
import type { DatasetCatalog } from "../dataset-catalog.ts";
import { readViewsOf, sparkRefusal } from "./engine-choice.ts";
import type { SparkWork } from "./errors.ts";
import { viewSparkRefusal } from "./view-engine-choice.ts";

/**
 * The first flow or materialized view an update runs (`run`, its flows narrowed to `runFlows` when
 * it selected flows) that Spark cannot run when everything is to run on Spark (the update's `engine`,
 * or `pipelines.engine = spark`), with why; undefined when all can, or when the engine is DuckDB or
 * `auto` (which keeps such a flow or view on DuckDB). Asked at start and at `validate_only`, so the
 * update is refused before any batch commits, not half-way when the view's turn comes. A view kept
 * incrementally always refreshes on DuckDB (view-engine-choice.ts) and is never refused. A view's
 * grouping keys' types are known only once its inputs exist: a key Spark spells otherwise refuses the
 * view at its turn, before its job (materialized-view.ts); a flow's declared source columns here.
 */
export function firstRefusedBySpark(
  catalog: DatasetCatalog,
  plan: { readonly run: readonly string[]; readonly runFlows?: readonly string[] },
  override: BatchEngine | undefined,
):
  | { readonly flow: string; readonly kind: SparkWork; readonly reason: string; readonly wayOut?: string }
  | undefined {
  const setting = override
    ? { kind: "fixed", engine: override }
    : (catalog.pipeline.settings.engine ?? DEFAULT_ENGINE);
  if (setting.kind !== "fixed" || setting.engine !== "spark") return undefined;
  const pipeline = catalog.pipeline.definition;
  for (const name of plan.run) {
    const dataset = pipeline.datasets.find((d) => d.name === name);
    if (dataset?.type === "materialized_view") {
      if (catalog.viewPlan(name).kind === "incremental") continue;
      const refusal = viewSparkRefusal({ pipeline, view: dataset, readViews: readViewsOf(catalog, name) });
      if (refusal) return { flow: name, kind: "materialized view", ...refusal };
    }
    if (dataset?.type !== "streaming_table") continue;
    for (const flow of dataset.flows) {
      if (plan.runFlows && !plan.runFlows.includes(flow.name)) continue;
      const refusal = sparkRefusal({
        pipeline,
        dataset,
        flow,
        readViews: readViewsOf(catalog, dataset.name, flow.name),
      });
      if (refusal) return { flow: flow.name, kind: "flow", ...refusal };
    }
  }
  return undefined;
}
