import { useState } from "react";
import type { DatasetInfo, DatasetSpec } from "../api/types.ts";
import { DatasetGraph, type DatasetMark } from "../components/DatasetGraph.tsx";
import { downstreamOf } from "../components/graph-layout.ts";
import { formatCount } from "../format.ts";

/**
 * Step 2: which datasets to rewind, picked on the graph or in a list; with cascade their downstreams
 * come along (shown here, decided by the API's dry run in the review). "Reset all checkpoints" is on
 * by default; clearing it asks the API, and a refusal locks it on with the API's reason.
 */
export function DatasetStep(props: {
  datasets: readonly DatasetInfo[];
  specs: readonly DatasetSpec[];
  selected: ReadonlySet<string>;
  onSelected: (selected: ReadonlySet<string>) => void;
  cascade: boolean;
  onCascade: (cascade: boolean) => void;
  resetCheckpoints: boolean;
  onResetCheckpoints: (reset: boolean) => void;
  resetLock: string | undefined;
  checkingReset: boolean;
}) {
  const [view, setView] = useState<"graph" | "list">("graph");
  const downstream = props.cascade ? downstreamOf(props.datasets, props.selected) : new Set<string>();
  const toggle = (name: string) => {
    const next = new Set(props.selected);
    if (next.has(name)) next.delete(name);
    else next.add(name);
    props.onSelected(next);
  };
  const marks: Record<string, DatasetMark> = {};
  for (const d of props.datasets)
    marks[d.name] = props.selected.has(d.name) ? "selected" : downstream.has(d.name) ? "cascade" : "excluded";
  return (
    <div className="step">
      <div className="row">
        <div className="segmented" role="group" aria-label="View">
          <button type="button" aria-pressed={view === "graph"} onClick={() => setView("graph")}>
            Graph view
          </button>
          <button type="button" aria-pressed={view === "list"} onClick={() => setView("list")}>
            List view
          </button>
        </div>
        <button
          type="button"
          className="button button-quiet"
          onClick={() => props.onSelected(new Set(props.datasets.map((d) => d.name)))}
        >
          Select all
        </button>
        <button type="button" className="button button-quiet" onClick={() => props.onSelected(new Set())}>
          Clear
        </button>
        <span className="subtle">
          {props.selected.size} selected{downstream.size > 0 && `, ${downstream.size} more via cascade`}
        </span>
      </div>
      {view === "graph" ? (
        <>
          <p className="subtle">Click a dataset to include or leave it out.</p>
          <DatasetGraph
            datasets={props.datasets}
            specs={props.specs}
            marks={marks}
            onPick={toggle}
            height={300}
          />
        </>
      ) : (
        <div className="scroll">
          <table className="grid grid-compact">
            <caption className="sr-only">Datasets to rewind</caption>
            <thead>
              <tr>
                <th>Include</th>
                <th>Dataset</th>
                <th>Type</th>
                <th className="num">Version</th>
                <th className="num">Rows</th>
                <th>Upstreams</th>
              </tr>
            </thead>
            <tbody>
              {props.datasets.map((d) => (
                <tr key={d.name}>
                  <td>
                    <input
                      type="checkbox"
                      aria-label={`Include ${d.name}`}
                      checked={props.selected.has(d.name)}
                      onChange={() => toggle(d.name)}
                    />
                    {downstream.has(d.name) && <span className="subtle"> via cascade</span>}
                  </td>
                  <td>{d.name}</td>
                  <td>{d.type.replaceAll("_", " ")}</td>
                  <td className="num">{d.version ?? "—"}</td>
                  <td className="num">{formatCount(d.row_count)}</td>
                  <td>{d.upstreams.join(", ") || "—"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <div className="options">
        <label className="choice">
          <input
            type="checkbox"
            checked={props.cascade}
            onChange={(e) => props.onCascade(e.target.checked)}
          />
          <span>
            <strong>Include downstream datasets</strong>
            <span className="subtle"> (cascade): what reads a rewound table is rewound with it.</span>
          </span>
        </label>
        <label className="choice">
          <input
            type="checkbox"
            checked={props.resetCheckpoints}
            disabled={props.resetLock !== undefined || props.checkingReset}
            onChange={(e) => props.onResetCheckpoints(e.target.checked)}
          />
          <span>
            <strong>Reset all checkpoints</strong>
            <span className="subtle">
              {" "}
              restores source offsets and operator state with the table data, so the pipeline reprocesses from
              the rewind point. Clear it to restore the table data only.
            </span>
            {props.checkingReset && <span className="subtle"> Asking Ebb…</span>}
          </span>
        </label>
        {props.resetLock && (
          <div className="note note-info" role="status">
            <strong>Locked on:</strong> {props.resetLock}
          </div>
        )}
      </div>
    </div>
  );
}
