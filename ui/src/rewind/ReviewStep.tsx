import type { RewindPointInfo } from "../api/types.ts";
import { ErrorNote } from "../components/ErrorNote.tsx";
import { formatValue, RowsTable, type CellView } from "../components/RowsTable.tsx";
import { formatCount, formatTime } from "../format.ts";
import type { RewindPreview } from "./rewind-preview.ts";
import type { RewindTarget } from "./wizard-state.ts";

/**
 * Step 3: the point, the checkpoint setting, every dataset the API's dry run says the rewind restores
 * (version now → after) and, per table, the rows it takes back (the change feed since the target).
 * A refusal the rewind would meet is shown here, with the API's message.
 */
export function ReviewStep(props: {
  target: RewindTarget;
  point: RewindPointInfo | undefined;
  resetCheckpoints: boolean;
  preview: RewindPreview | undefined;
  checking: boolean;
  refusal: unknown;
}) {
  return (
    <div className="step">
      <dl className="facts facts-wide">
        <dt>Rewind to</dt>
        <dd>
          {props.target.kind === "point" ? (
            <>
              {props.point ? formatTime(props.point.timestamp) : "point"}{" "}
              <span className="subtle mono">{props.target.pointId}</span>
            </>
          ) : (
            formatTime(props.target.timestamp)
          )}
        </dd>
        <dt>The request carries</dt>
        <dd>
          <code className="time-request">
            {props.target.kind === "point"
              ? `rewind_point_id: ${props.target.pointId}`
              : `rewind_timestamp: ${props.target.timestamp}`}
          </code>
        </dd>
        <dt>Checkpoints</dt>
        <dd>
          {props.resetCheckpoints
            ? "Reset: sources and state go back too; the next run reprocesses from the point"
            : "Kept: only table data is restored; nothing is reprocessed"}
        </dd>
      </dl>
      {props.checking && (
        <p className="muted" role="status">
          Rehearsing the rewind (dry run)…
        </p>
      )}
      <ErrorNote error={props.refusal} title="Ebb would refuse this rewind:" />
      {props.preview && (
        <>
          <h3>Affected datasets</h3>
          <div className="scroll">
            <table className="grid grid-compact preview" aria-label="Affected datasets">
              <thead>
                <tr>
                  <th>Dataset</th>
                  <th className="num">Version now</th>
                  <th className="num">After rewind</th>
                  <th className="num count-removed">
                    Rows removed <span className="th-note">added since the point</span>
                  </th>
                  <th className="num count-changed">
                    Rows changed back <span className="th-note">updated since</span>
                  </th>
                  <th className="num count-restored">
                    Rows restored <span className="th-note">deleted since</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {props.preview.datasets.map((d) => (
                  <tr key={d.identifier} data-dataset={d.name}>
                    <td>{d.identifier}</td>
                    <td className="num">{d.versionNow ?? "—"}</td>
                    <td className="num">{d.targetVersion < 0 ? "emptied" : d.targetVersion}</td>
                    <td className="num count-removed" data-count="inserted">
                      {formatCount(d.undo.inserted)}
                    </td>
                    <td className="num count-changed" data-count="updated">
                      {formatCount(d.undo.updated)}
                    </td>
                    <td className="num count-restored" data-count="deleted">
                      {formatCount(d.undo.deleted)}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <p className="subtle">
            Counts are the change feed from each table&apos;s target version to now, which the rewind takes
            back: rows added since are removed, rows deleted since come back.
          </p>
          {props.preview.datasets
            .filter((d) => d.undo.sample.length > 0)
            .map((d) => (
              <details key={d.identifier} className="sample">
                <summary>
                  Rows the rewind takes back from {d.name}
                  {d.undo.partial && " (first pages)"}
                </summary>
                <SampleTable rows={d.undo.sample} />
              </details>
            ))}
        </>
      )}
    </div>
  );
}

function SampleTable({ rows }: { rows: readonly Record<string, unknown>[] }) {
  const columns = Object.keys(rows[0] ?? {}).filter((c) => c !== "_commit_timestamp");
  return <RowsTable rows={rows} columns={columns} heading={undoHeading} cell={undoCell} />;
}

function undoHeading(column: string): string {
  return column === "_change_type" ? "the rewind" : column === "_commit_version" ? "version" : column;
}

/** A sampled row's `_change_type` says what the rewind does to it. */
const undoCell: CellView = (column, value) =>
  column === "_change_type"
    ? { className: `change undo-${String(value)}`, text: undoWord(String(value)) }
    : { className: "mono", text: formatValue(value) };

/** What the rewind does to a row the change feed lists since the point. */
function undoWord(changeType: string): string {
  if (changeType === "insert") return "removes (added since)";
  if (changeType === "delete") return "restores (deleted since)";
  if (changeType === "update_postimage") return "removes (value since)";
  if (changeType === "update_preimage") return "restores (value before)";
  return changeType;
}
