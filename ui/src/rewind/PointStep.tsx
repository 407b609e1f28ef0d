import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { ebb } from "../api/client.ts";
import type { DatasetInfo, RewindPointInfo } from "../api/types.ts";
import { ErrorNote } from "../components/ErrorNote.tsx";
import { TimeInput } from "../components/TimeInput.tsx";
import { formatAgo, formatTime } from "../format.ts";
import { parseTime, requestTimestamp } from "../time/zoned-time.ts";
import {
  isDryRunPoint,
  latestPoint,
  offeredPoints,
  pointEffect,
  pointKind,
  yesterdayPoint,
  type RewindTarget,
} from "./wizard-state.ts";

/** Step 1: a rewind point from the list, a shortcut, or a timestamp (with the onset finder at hand). */
export function PointStep(props: {
  points: readonly RewindPointInfo[];
  datasets: readonly DatasetInfo[];
  target: RewindTarget | undefined;
  onTarget: (target: RewindTarget) => void;
}) {
  const latest = latestPoint(props.points);
  const dryRuns = props.points.filter(isDryRunPoint).length;
  const [withDryRuns, setWithDryRuns] = useState(false);
  const shown = offeredPoints(props.points, withDryRuns);
  const yesterday = yesterdayPoint(props.points, Date.now());
  const [instant, setInstant] = useState<number | undefined>(
    props.target?.kind === "timestamp" ? Date.parse(props.target.timestamp) : undefined,
  );
  // The field is remade (its key) when the onset finder fills it in.
  const [filled, setFilled] = useState(0);
  const chooseInstant = (at: number) =>
    props.onTarget({ kind: "timestamp", timestamp: requestTimestamp(at) });
  const pick = (point: RewindPointInfo) => props.onTarget({ kind: "point", pointId: point.rewind_point_id });
  return (
    <div className="step">
      <div className="shortcuts">
        <button type="button" className="button" disabled={!latest} onClick={() => latest && pick(latest)}>
          Rewind to the latest point
        </button>
        <button
          type="button"
          className="button"
          disabled={!yesterday}
          title={yesterday ? undefined : "No rewind point is a day old yet"}
          onClick={() => yesterday && pick(yesterday)}
        >
          Rewind to yesterday
        </button>
      </div>
      {props.points.length === 0 && (
        <p className="muted">
          No rewind points yet: one is captured at the end of each update and every hour (with{" "}
          <code>pipelines.rewind.enabled</code>). You can still rewind to a timestamp.
        </p>
      )}
      <fieldset className="points">
        <legend>Rewind points (newest first)</legend>
        {dryRuns > 0 && (
          <label className="choice choice-inline subtle">
            <input type="checkbox" checked={withDryRuns} onChange={(e) => setWithDryRuns(e.target.checked)} />
            Show dry runs&apos; points ({dryRuns}): each records the target a dry run rehearsed
          </label>
        )}
        {shown.map((point) => {
          const effect = pointEffect(point, props.datasets);
          const changed = effect.filter((e) => e.changed);
          const checked = props.target?.kind === "point" && props.target.pointId === point.rewind_point_id;
          return (
            <label key={point.rewind_point_id} className={`point ${checked ? "point-selected" : ""}`}>
              <input type="radio" name="point" checked={checked} onChange={() => pick(point)} />
              <span className="point-main">
                <span className="point-time">
                  {formatTime(point.timestamp)} <span className="subtle">({formatAgo(point.timestamp)})</span>
                </span>
                <span className="point-kind">{pointKind(point)}</span>
                <span className="subtle">{point.message}</span>
                <span className="point-effect">
                  {changed.length === 0 ? (
                    <span className="subtle">No dataset has changed since this point.</span>
                  ) : (
                    changed.map((e) => (
                      <span key={e.name} className="chip chip-affected">
                        {e.name} v{e.now} → v{e.at}
                      </span>
                    ))
                  )}
                </span>
              </span>
              <span className="subtle mono point-id">{point.rewind_point_id}</span>
            </label>
          );
        })}
      </fieldset>
      <fieldset className="timestamp-choice">
        <legend>Or a timestamp</legend>
        <div className="row">
          <TimeInput key={filled} label="Rewind timestamp" initial={instant} onInstant={setInstant}>
            <button
              type="button"
              className="button"
              disabled={instant === undefined}
              onClick={() => instant !== undefined && chooseInstant(instant)}
            >
              Use this timestamp
            </button>
          </TimeInput>
          {props.target?.kind === "timestamp" && (
            <span className="chip chip-on">
              using {formatTime(props.target.timestamp)} ={" "}
              <code className="time-request">{props.target.timestamp}</code>
            </span>
          )}
        </div>
        <OnsetFinder
          datasets={props.datasets}
          onInstant={(at) => {
            setInstant(at);
            setFilled((n) => n + 1);
            chooseInstant(at);
          }}
          onPoint={pick}
        />
      </fieldset>
    </div>
  );
}

/** Where did it go wrong: a predicate on a table → the first bad commit and the midpoint timestamp. */
function OnsetFinder(props: {
  datasets: readonly DatasetInfo[];
  onInstant: (instant: number) => void;
  onPoint: (point: RewindPointInfo) => void;
}) {
  const tables = props.datasets.filter((d) => d.type !== "view");
  const [table, setTable] = useState(tables[0]?.identifier ?? "");
  const [predicate, setPredicate] = useState("");
  const find = useMutation({
    mutationFn: () => ebb.onset(table, { predicate }),
  });
  const onset = find.data;
  // The server's pick: the owning pipeline's newest point at which the table is older than the onset.
  const before = onset?.rewind_point;
  // The API's midpoint is UTC without a zone (the seed's form): read as UTC, shown in the display zone.
  const midpoint = onset?.rewind_timestamp ? parseTime(onset.rewind_timestamp, "UTC") : undefined;
  return (
    <div className="onset">
      <h3>Find the onset</h3>
      <p className="subtle">
        A SQL predicate that is true of bad rows; Ebb finds the first commit that added one.
      </p>
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault();
          find.mutate();
        }}
      >
        <label className="field field-inline">
          <span>Table</span>
          <select aria-label="Table" value={table} onChange={(e) => setTable(e.target.value)}>
            {tables.map((d) => (
              <option key={d.identifier} value={d.identifier}>
                {d.name}
              </option>
            ))}
          </select>
        </label>
        <label className="field field-inline grow">
          <span>Bad rows where</span>
          <input
            className="mono"
            placeholder="amount >= 100"
            value={predicate}
            onChange={(e) => setPredicate(e.target.value)}
          />
        </label>
        <button
          type="submit"
          className="button"
          disabled={!table || predicate.trim() === "" || find.isPending}
        >
          Find onset
        </button>
      </form>
      <ErrorNote error={find.error} />
      {onset && !onset.found && (
        <p className="muted">No version of {table} has a row matching that predicate.</p>
      )}
      {onset?.found && (
        <div className="onset-result" role="status">
          <dl className="facts">
            <dt>First bad version</dt>
            <dd>
              v{onset.first_bad_version} at {formatTime(onset.first_bad_commit_time)}
            </dd>
            <dt>Last good version</dt>
            <dd>
              v{onset.last_good_version} at {formatTime(onset.last_good_commit_time)}
            </dd>
            <dt>Midpoint</dt>
            <dd className="onset-midpoint">{formatTime(midpoint)}</dd>
          </dl>
          <div className="row">
            {midpoint !== undefined && (
              <button type="button" className="button" onClick={() => props.onInstant(midpoint)}>
                Rewind to the midpoint
              </button>
            )}
            {before && (
              <button type="button" className="button" onClick={() => props.onPoint(before)}>
                Use the newest point before the onset ({formatTime(before.timestamp)})
              </button>
            )}
          </div>
        </div>
      )}
    </div>
  );
}
