import { useUpdate } from "../api/queries.ts";
import { StateBadge } from "../components/StateBadge.tsx";
import { formatCount, formatDuration, formatTime, shortName } from "../format.ts";
import { duration, updateKind } from "./update-kind.ts";

/** One update, live while it runs (polled each second): per flow its batches, rows and whether caught up. */
export function UpdateDetails({
  pipelineId,
  updateId,
}: {
  pipelineId: string;
  updateId: string | undefined;
}) {
  const query = useUpdate(pipelineId, updateId);
  const update = query.data;
  if (!updateId) return <p className="muted pad">Select an update.</p>;
  if (!update) return <p className="muted pad">Loading…</p>;
  const flows = Object.entries(update.progress ?? {});
  const spec = update.rewind_spec;
  return (
    <section className="update-details" aria-label="Selected update" aria-live="polite">
      <div className="update-details-header">
        <StateBadge state={update.state} />
        <h3>{updateKind(update)}</h3>
        <span className="subtle mono">{update.update_id}</span>
      </div>
      <dl className="facts">
        <dt>Started</dt>
        <dd>{formatTime(update.creation_time)}</dd>
        <dt>Duration</dt>
        <dd>{formatDuration(duration(update, Date.now()))}</dd>
        <dt>Cause</dt>
        <dd>{update.cause}</dd>
        <dt>Definition</dt>
        <dd>v{update.definition_version}</dd>
        {update.reset_mode && (
          <>
            <dt>Reset mode</dt>
            <dd>{update.reset_mode}</dd>
          </>
        )}
        {update.cut && (
          <>
            <dt>Cut</dt>
            <dd data-fact="cut">
              one of the pipelines rewound to cut <span className="mono">{update.cut.request_id}</span>
            </dd>
          </>
        )}
        {update.ordered_run && (
          <>
            <dt>Ordered run</dt>
            <dd data-fact="ordered-run">
              run {update.ordered_run.position} of {update.ordered_run.of} in ordered run{" "}
              <span className="mono">{update.ordered_run.request_id}</span>
            </dd>
          </>
        )}
        {spec && (
          <>
            <dt>Rewind to</dt>
            <dd className="mono">{spec.rewind_point_id ?? spec.rewind_timestamp}</dd>
            <dt>Datasets</dt>
            <dd>
              {spec.datasets
                ?.map((d) => `${shortName(d.identifier)}${d.cascade ? " + downstream" : ""}`)
                .join(", ") ?? "all"}
            </dd>
          </>
        )}
      </dl>
      {update.error && (
        <div className="note note-bad" role="alert">
          {update.error.message} <code className="error-code">{update.error.error_code}</code>
        </div>
      )}
      {flows.length > 0 ? (
        <div className="scroll">
          <table className="grid grid-compact">
            <caption className="sr-only">Flow progress</caption>
            <thead>
              <tr>
                <th>Flow</th>
                <th>Dataset</th>
                <th>Status</th>
                <th className="num">Batches</th>
                <th className="num">Rows in</th>
                <th className="num">Rows out</th>
              </tr>
            </thead>
            <tbody>
              {flows.map(([flow, p]) => (
                <tr key={flow} data-flow={flow}>
                  <td className="mono">{flow}</td>
                  <td>{p.dataset ?? "—"}</td>
                  <td>
                    <StateBadge state={p.status === "COMPLETED" ? "COMPLETED" : p.status} />
                    {p.status === "COMPLETED" && <span className="subtle"> caught up</span>}
                  </td>
                  <td className="num">{formatCount(p.batches)}</td>
                  <td className="num">{formatCount(p.rows_in)}</td>
                  <td className="num">{formatCount(p.rows_out)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <p className="muted">{spec ? "A rewind runs no flows." : "No flow has reported progress yet."}</p>
      )}
    </section>
  );
}
