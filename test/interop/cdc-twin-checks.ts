import { expect } from "vitest";
import type { TestControlPlane } from "../support/control-plane.ts";
import type { Twins, twinsOnControlPlane } from "./twin-pipelines.ts";

/**
 * The AUTO CDC twins' check beside their tables (spark-cdc.test.ts, spark-cdc-edges.test.ts): each
 * target's change feed, MERGE by MERGE, and each flow's per-key state are the DuckDB-only twin's.
 */
export function cdcTwinCheck(
  twins: Pick<ReturnType<typeof twinsOnControlPlane>, "cp" | "flowState">,
  compared: { readonly tables: readonly string[]; readonly flows: readonly string[] },
) {
  return async ({ duck, mixed }: Twins<{ id: string; update: string }>, what: string) => {
    for (const table of compared.tables)
      expect(await changeFeed(twins.cp(), mixed.id, table), `${table}'s change feed after ${what}`).toEqual(
        await changeFeed(twins.cp(), duck.id, table),
      );
    for (const flow of compared.flows)
      expect(
        withoutApplyTimes(await twins.flowState(mixed.id, flow)),
        `${flow}'s state after ${what}`,
      ).toEqual(withoutApplyTimes(await twins.flowState(duck.id, flow)));
  };
}

/**
 * A target's change feed, commit by commit: each MERGE's change rows (without the commit's version
 * and time, which the twins' compactions and clocks number differently), oldest first.
 */
async function changeFeed(cp: TestControlPlane, pipelineId: string, table: string): Promise<unknown[]> {
  const { spec } = await cp.client.getPipeline(pipelineId);
  const name = `${spec.catalog}.${spec.schema}.${table}`;
  const { history } = await cp.client.history(name);
  const merges = history
    .filter((entry) => entry["operation"] === "MERGE")
    .map((entry) => Number(entry["version"]))
    .sort((a, b) => a - b);
  const feed: unknown[] = [];
  for (const version of merges) {
    const { changes } = await cp.client.changes(name, {
      starting_version: version,
      ending_version: version,
      max_results: 1000,
    });
    feed.push(
      changes.map(({ _commit_version: _v, _commit_timestamp: _t, ...row }) => JSON.stringify(row)).sort(),
    );
  }
  return feed;
}

/**
 * A state without its events' `__cdc_at` (when its batch was applied: the twins' batches run at
 * different times; it only ages tombstones out, after two days).
 */
function withoutApplyTimes<S extends { rows: readonly unknown[] }>(state: S): S {
  const events = (row: unknown) =>
    (row as { value?: { __cdc_events?: Record<string, unknown>[] } }).value?.__cdc_events;
  return {
    ...state,
    rows: state.rows.map((row) => {
      const list = events(row);
      if (!list) return row;
      const value = (row as { value: Record<string, unknown> }).value;
      return {
        ...(row as object),
        value: { ...value, __cdc_events: list.map(({ __cdc_at: _at, ...rest }) => rest) },
      };
    }),
  };
}
