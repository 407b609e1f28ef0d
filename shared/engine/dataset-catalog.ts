import type { DatasetDefinition } from "../pipeline/definition-schema.ts";
import type { FlowPlan, ViewPlan } from "../pipeline/plan/index.ts";
import type { ValidatedPipeline } from "../pipeline/validate-pipeline.ts";
import type { ObjectStore } from "../object-store/object-store.ts";
import { tablePrefix } from "../store/bucket-layout.ts";
import { withPrefix } from "../object-store/prefixed-object-store.ts";

/**
 * Where a pipeline's datasets live and what a query reads (architecture.md "Storage": a dataset is
 * the Delta table `tables/<catalog>/<schema>/<table>/`). A view is not stored: it is its SQL, expanded
 * wherever it is read.
 */

/** Suffix of the table that holds a dataset's malformed source records. */
export const QUARANTINE_SUFFIX = "_quarantine";

/** One thing a query reads besides `source`, in the order to register it (dependencies first). */
export type SnapshotRead =
  | { readonly kind: "table"; readonly name: string; readonly store: ObjectStore }
  | { readonly kind: "view"; readonly name: string; readonly sql: string };

export class DatasetCatalog {
  constructor(
    readonly pipeline: ValidatedPipeline,
    /** The pipeline's bucket (root view). */
    readonly store: ObjectStore,
  ) {}

  /** The key prefix of a table of this pipeline's schema. */
  tablePrefix(table: string): string {
    const { catalog, schema } = this.pipeline.definition;
    return tablePrefix({ catalog, schema, table });
  }

  readonly #tableStores = new Map<string, ObjectStore>();

  /**
   * The object-store view of a table's root folder, one per table for the catalog's life (a task):
   * the Delta layer holds the table's latest snapshot per view, so the writer, readers and views of
   * one task share it (`currentSnapshot`).
   */
  tableStore(table: string): ObjectStore {
    let store = this.#tableStores.get(table);
    if (!store) {
      store = withPrefix(this.store, this.tablePrefix(table));
      this.#tableStores.set(table, store);
    }
    return store;
  }

  /** The pipeline's catalog and schema: where its datasets are named. */
  get namespace(): { readonly catalog: string; readonly schema: string } {
    const { catalog, schema } = this.pipeline.definition;
    return { catalog, schema };
  }

  /** `catalog.schema.table`. */
  qualifiedName(table: string): string {
    const { catalog, schema } = this.pipeline.definition;
    return `${catalog}.${schema}.${table}`;
  }

  dataset(name: string): DatasetDefinition {
    const dataset = this.pipeline.definition.datasets.find((d) => d.name === name);
    return dataset ?? this.#absent(`dataset ${name}`);
  }

  /** What a flow runs on each micro-batch, compiled when the definition was validated. */
  flowPlan(flow: string): FlowPlan {
    return this.pipeline.plans.flows.get(flow) ?? this.#absent(`flow ${flow}`);
  }

  /** How a materialized view refreshes, compiled when the definition was validated. */
  viewPlan(view: string): ViewPlan {
    return this.pipeline.plans.views.get(view) ?? this.#absent(`materialized view ${view}`);
  }

  /** A name the validated pipeline does not have: the caller's bug. */
  #absent(what: string): never {
    throw new RangeError(`no ${what} in pipeline ${this.pipeline.definition.name}`);
  }

  /**
   * What the query of `dataset` (of its flow `flow`, for a streaming table) reads as snapshots:
   * tables directly, and views with whatever they read, dependencies first.
   */
  snapshotReads(dataset: string, flow?: string): SnapshotRead[] {
    const ordered: SnapshotRead[] = [];
    const seen = new Set<string>();
    const visit = (name: string, viaFlow?: string): void => {
      for (const edge of this.pipeline.graph.edges) {
        if (edge.to !== name || edge.kind !== "read") continue;
        if (viaFlow !== undefined && edge.flow !== undefined && edge.flow !== viaFlow) continue;
        if (seen.has(edge.from)) continue;
        seen.add(edge.from);
        const read = this.dataset(edge.from);
        if (read.type === "view") {
          visit(read.name);
          ordered.push({ kind: "view", name: read.name, sql: read.sql });
        } else {
          ordered.push({ kind: "table", name: read.name, store: this.tableStore(read.name) });
        }
      }
    };
    visit(dataset, flow);
    return ordered;
  }
}
