import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { ebb } from "../api/client.ts";
import { usePipeline, useTableHistory } from "../api/queries.ts";
import { ErrorNote } from "../components/ErrorNote.tsx";
import { formatTime } from "../format.ts";
import { displayZone, zoneName } from "../time/display-zone.ts";
import { parseTime, requestTimestamp } from "../time/zoned-time.ts";
import { formatValue, RowsTable, type CellView } from "../components/RowsTable.tsx";
import { navigate, paths } from "../routing.ts";

/**
 * A table: its history (DESCRIBE HISTORY, the page's whole width), its rows as of a version or a time
 * (typed in the display zone), its change feed.
 */
export function TablePage({ table, pipelineId }: { table: string; pipelineId?: string | undefined }) {
  const history = useTableHistory(table);
  const pipeline = usePipeline(pipelineId ?? "", pipelineId !== undefined);
  const [asOf, setAsOf] = useState("");
  const at = asOf.trim();
  const asOfInstant = /^\d+$/.test(at) || at === "" ? undefined : parseTime(at, displayZone());
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  const browse = useMutation({
    mutationFn: () => {
      const version = /^\d+$/.test(at)
        ? { version: Number(at) }
        : asOfInstant !== undefined
          ? { timestamp: requestTimestamp(asOfInstant) }
          : at
            ? { timestamp: at } // no time the UI reads: the API's refusal says what it takes
            : {};
      return ebb.query(table, { ...version, limit: 200 });
    },
  });
  const changes = useMutation({
    mutationFn: () =>
      ebb.changes(table, {
        ...(from ? { starting_version: Number(from) } : {}),
        ...(to ? { ending_version: Number(to) } : {}),
        max_results: 200,
      }),
  });
  return (
    <section>
      <nav className="crumbs" aria-label="Breadcrumb">
        <a
          href={paths.pipelines()}
          onClick={(e) => {
            e.preventDefault();
            navigate(paths.pipelines());
          }}
        >
          Pipelines
        </a>
        {pipelineId && (
          <>
            {" / "}
            <a
              href={paths.pipeline(pipelineId)}
              onClick={(e) => {
                e.preventDefault();
                navigate(paths.pipeline(pipelineId));
              }}
            >
              {pipeline.data?.name ?? "pipeline"}
            </a>
          </>
        )}{" "}
        / <span aria-current="page">{table}</span>
      </nav>
      <h1 className="mono-title">{table}</h1>
      <div className="table-page">
        <div className="pane">
          <h2>History</h2>
          <ErrorNote error={history.error} />
          <div className="scroll">
            <table className="grid grid-compact history" aria-label="History">
              <thead>
                <tr>
                  <th className="num">Version</th>
                  <th>Time</th>
                  <th>Operation</th>
                  <th>Parameters</th>
                  <th>Metrics</th>
                </tr>
              </thead>
              <tbody>
                {(history.data ?? []).map((h) => (
                  <tr key={String(h["version"])}>
                    <td className="num">
                      <button
                        type="button"
                        className="link-button"
                        onClick={() => setAsOf(String(h["version"]))}
                      >
                        {String(h["version"])}
                      </button>
                    </td>
                    <td className="nowrap">{formatTime(h["timestamp"] as string)}</td>
                    <td>{String(h["operation"])}</td>
                    <td className="mono small">
                      <KeyValues value={h["operationParameters"]} />
                    </td>
                    <td className="mono small">
                      <KeyValues value={h["operationMetrics"]} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </div>
        <div className="pane">
          <h2>Browse</h2>
          <form
            className="row"
            onSubmit={(e) => {
              e.preventDefault();
              browse.mutate();
            }}
          >
            <label className="field field-inline grow">
              <span>As of version or timestamp ({zoneName(displayZone())})</span>
              <input
                className="mono"
                placeholder="latest"
                value={asOf}
                onChange={(e) => setAsOf(e.target.value)}
              />
            </label>
            <button type="submit" className="button">
              Show rows
            </button>
          </form>
          {asOfInstant !== undefined && (
            <p className="subtle">
              Sends <code className="time-request">{requestTimestamp(asOfInstant)}</code>
            </p>
          )}
          <ErrorNote error={browse.error} />
          {browse.data && (
            <>
              <p className="subtle">
                Version {browse.data.version} ({formatTime(browse.data.timestamp)}), {browse.data.rows.length}{" "}
                rows
                {browse.data.truncated && " (first rows only)"}
              </p>
              <Rows rows={browse.data.rows} label="Rows" />
            </>
          )}
          <h2>Change feed</h2>
          <form
            className="row"
            onSubmit={(e) => {
              e.preventDefault();
              changes.mutate();
            }}
          >
            <label className="field field-inline">
              <span>From version</span>
              <input
                className="mono"
                size={6}
                inputMode="numeric"
                value={from}
                onChange={(e) => setFrom(e.target.value)}
              />
            </label>
            <label className="field field-inline">
              <span>To version</span>
              <input
                className="mono"
                size={6}
                inputMode="numeric"
                value={to}
                onChange={(e) => setTo(e.target.value)}
              />
            </label>
            <button type="submit" className="button">
              Show changes
            </button>
          </form>
          <ErrorNote error={changes.error} />
          {changes.data && <Rows rows={changes.data.changes} label="Changes" />}
        </div>
      </div>
    </section>
  );
}

/** One `key=value` a line, so a long value wraps within its own line. */
function KeyValues({ value }: { value: unknown }) {
  if (!value || typeof value !== "object") return null;
  return (
    <>
      {Object.entries(value as Record<string, unknown>)
        .filter(([, v]) => v !== null && v !== "" && v !== "[]" && v !== "{}")
        .map(([k, v]) => (
          <div key={k} className="key-value">
            {k}={formatValue(v)}
          </div>
        ))}
    </>
  );
}

function Rows({ rows, label }: { rows: readonly Record<string, unknown>[]; label: string }) {
  if (rows.length === 0) return <p className="muted">No rows.</p>;
  return <RowsTable rows={rows} label={label} columns={Object.keys(rows[0]!)} cell={changeFeedCell} />;
}

/** A change feed's `_change_type` is coloured by kind. */
const changeFeedCell: CellView = (column, value) => ({
  className: column === "_change_type" ? `change change-${String(value)}` : "mono",
  text: formatValue(value),
});
