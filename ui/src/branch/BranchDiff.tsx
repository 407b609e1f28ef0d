import type { BranchDiff as Diff } from "../../../shared/client/ebb-client.ts";
import { RowsTable } from "../components/RowsTable.tsx";
import { formatCount } from "../format.ts";

type TableDiff = Diff["tables"][number];
type Row = Readonly<Record<string, unknown>>;

/**
 * A branch against live, per table (docs/branches.md "Diff"): the rows only on the branch, only on
 * live (whole rows, as multisets) and, for a table with keys, the keys whose rows differ; each a count
 * and up to `max_samples` samples.
 */
export function BranchDiff({ diff }: { diff: Diff }) {
  if (diff.tables.length === 0) return <p className="muted">The branch has no tables.</p>;
  return (
    <>
      {diff.tables.map((t) => (
        <TableDiffView key={t.name} table={t} />
      ))}
    </>
  );
}

function TableDiffView({ table }: { table: TableDiff }) {
  const same =
    table.only_on_branch.count === 0 && table.only_on_live.count === 0 && (table.changed?.count ?? 0) === 0;
  return (
    <section className="pane branch-diff" aria-label={`Diff of ${table.name}`} data-table={table.name}>
      <h3 className="mono-title">{table.name}</h3>
      <p className="subtle">
        branch v{table.branch_version ?? "—"} · live v{table.live_version ?? "—"} ·{" "}
        {table.keys ? `matched by key ${table.keys.join(", ")}` : "whole rows compared (no keys)"}
      </p>
      <dl className="facts diff-counts">
        <dt>Only on the branch</dt>
        <dd data-count="only_on_branch">{formatCount(table.only_on_branch.count)}</dd>
        <dt>Only on live</dt>
        <dd data-count="only_on_live">{formatCount(table.only_on_live.count)}</dd>
        {table.changed && (
          <>
            <dt>Changed by key</dt>
            <dd data-count="changed">{formatCount(table.changed.count)}</dd>
          </>
        )}
      </dl>
      {same && <p className="muted">Same rows on the branch and on live.</p>}
      <Rows
        title="Only on the branch"
        rows={table.only_on_branch.samples}
        sampled={table.only_on_branch.samples.length}
        total={table.only_on_branch.count}
      />
      <Rows
        title="Only on live"
        rows={table.only_on_live.samples}
        sampled={table.only_on_live.samples.length}
        total={table.only_on_live.count}
      />
      {table.changed && table.changed.samples.length > 0 && (
        <Rows
          title="Changed by key"
          sampled={table.changed.samples.length}
          total={table.changed.count}
          rows={table.changed.samples.flatMap((s) => [
            { side: "branch", ...s.branch },
            { side: "live", ...s.live },
          ])}
        />
      )}
    </section>
  );
}

/** Sample rows, `sampled` of `total` (a changed key's sample is two rows: its branch and live sides). */
function Rows(props: { title: string; rows: readonly Row[]; sampled: number; total: number }) {
  const { title, rows, sampled, total } = props;
  if (rows.length === 0) return null;
  return (
    <RowsTable
      rows={rows}
      label={`${title}: samples`}
      caption={`${title}: ${sampled === total ? "all" : `${sampled} of ${formatCount(total)}`}`}
    />
  );
}
