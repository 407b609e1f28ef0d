import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import { ebb, errorText } from "../api/client.ts";
import { isTerminal, useDatasets, usePipeline, useUpdates } from "../api/queries.ts";
import type { DatasetInfo, Update } from "../api/types.ts";
import { DatasetGraph, type DatasetMark } from "../components/DatasetGraph.tsx";
import { BranchList } from "../branch/BranchList.tsx";
import { ErrorNote } from "../components/ErrorNote.tsx";
import { StateBadge } from "../components/StateBadge.tsx";
import { formatAgo, formatTime, shortName } from "../format.ts";
import { DataQuality } from "../pipeline/DataQuality.tsx";
import { EventLog } from "../pipeline/EventLog.tsx";
import { RunControls } from "../pipeline/RunControls.tsx";
import { UpdateDetails } from "../pipeline/UpdateDetails.tsx";
import { UpdatesTimeline } from "../pipeline/UpdatesTimeline.tsx";
import { isDryRun, pendingReplay } from "../pipeline/update-kind.ts";
import { navigate, paths } from "../routing.ts";

/** A pipeline: its graph, its updates with the selected one live, the event log, its branches and the definition. */
export function PipelinePage({ id, tab, update }: { id: string; tab: string; update?: string | undefined }) {
  const pipeline = usePipeline(id);
  const running =
    pipeline.data !== undefined && pipeline.data.state !== "IDLE" && pipeline.data.state !== "FAILED";
  const datasets = useDatasets(id, running);
  const updates = useUpdates(id, running);
  const [chosen, setChosen] = useState<string | undefined>(update);
  const [withDryRuns, setWithDryRuns] = useState(false);
  const dryRuns = (updates.data ?? []).filter(isDryRun).length;
  const shown = (updates.data ?? []).filter((u) => withDryRuns || !isDryRun(u));
  const selected = chosen ?? shown[0]?.update_id;
  const selectedUpdate = updates.data?.find((u) => u.update_id === selected);
  const replay = updates.data ? pendingReplay(updates.data) : undefined;
  const rewound = useRewoundDatasets(id, replay);
  const marks = useMemo(() => datasetMarks(selectedUpdate, rewound.data), [selectedUpdate, rewound.data]);

  if (pipeline.error) return <ErrorNote error={pipeline.error} />;
  if (!pipeline.data) return <p className="muted">Loading…</p>;
  const p = pipeline.data;
  const tabs = [
    { id: "graph", label: "Graph and updates" },
    { id: "events", label: "Event log" },
    { id: "branches", label: "Branches" },
    { id: "definition", label: "Definition" },
  ];
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
        </a>{" "}
        / <span aria-current="page">{p.name}</span>
      </nav>
      <div className="page-header">
        <div>
          <h1>
            {p.name} <StateBadge state={p.state} />
            {replay && <StateBadge state="REPLAY PENDING" title="Rewound: start the pipeline to replay" />}
          </h1>
          <p className="subtle">
            {p.spec.catalog}.{p.spec.schema} · definition v{p.definition_version} · modified{" "}
            {formatAgo(p.last_modified)}
            {p.rewind?.latest_rewind_point && (
              <> · latest rewind point {formatTime(p.rewind.latest_rewind_point.timestamp)}</>
            )}
          </p>
        </div>
        <RunControls pipelineId={id} datasets={datasets.data ?? []} running={running} onStarted={setChosen} />
      </div>
      {p.rewind?.blocked && (
        <div className="note note-bad" role="alert">
          A rewind did not finish, so runs are refused until a rewind succeeds.{" "}
          <button type="button" className="link-button" onClick={() => navigate(paths.rewind(id))}>
            Rewind again
          </button>
        </div>
      )}
      {replay && !running && (
        <ReplayBanner pipelineId={id} rewind={replay} datasets={rewound.data ?? []} onStarted={setChosen} />
      )}
      <div className="tabs" role="tablist" aria-label="Pipeline views">
        {tabs.map((t) => (
          <button
            key={t.id}
            type="button"
            role="tab"
            aria-selected={tab === t.id}
            className="tab"
            onClick={() => navigate(paths.pipeline(id, t.id === "graph" ? undefined : t.id))}
          >
            {t.label}
          </button>
        ))}
      </div>
      {tab === "graph" && (
        <div role="tabpanel" aria-label="Graph and updates">
          {datasets.data && (
            <DatasetGraph
              datasets={datasets.data}
              specs={p.spec.definition.datasets}
              marks={marks}
              running={running}
            />
          )}
          <DatasetTable datasets={datasets.data ?? []} pipelineId={id} marks={marks} />
          <DataQuality
            pipelineId={id}
            updateId={selected}
            specs={p.spec.definition.datasets}
            running={running}
          />
          <div className="split-panes">
            <div className="pane">
              <div className="pane-header">
                <h2>Updates</h2>
                {dryRuns > 0 && (
                  <label className="choice choice-inline subtle">
                    <input
                      type="checkbox"
                      checked={withDryRuns}
                      onChange={(e) => setWithDryRuns(e.target.checked)}
                    />
                    Show rewind dry runs ({dryRuns})
                  </label>
                )}
              </div>
              <UpdatesTimeline updates={shown} selected={selected} onSelect={setChosen} />
            </div>
            <div className="pane">
              <h2>Update</h2>
              <UpdateDetails pipelineId={id} updateId={selected} />
            </div>
          </div>
        </div>
      )}
      {tab === "events" && (
        <div role="tabpanel" aria-label="Event log">
          <EventLog pipelineId={id} datasets={(datasets.data ?? []).map((d) => d.name)} />
        </div>
      )}
      {tab === "branches" && (
        <div role="tabpanel" aria-label="Branches">
          <BranchList pipelineId={id} />
        </div>
      )}
      {tab === "definition" && (
        <div role="tabpanel" aria-label="Definition">
          <pre className="json">{JSON.stringify(p.spec, null, 2)}</pre>
        </div>
      )}
    </section>
  );
}

/** The datasets a rewind restored, from its `rewind_progress` events. */
function useRewoundDatasets(pipelineId: string, rewind: Update | undefined) {
  return useQuery({
    queryKey: ["pipeline", pipelineId, "rewound", rewind?.update_id],
    enabled: rewind !== undefined,
    queryFn: async () => {
      const { events } = await ebb.events(pipelineId, {
        filter: `origin.update_id = '${rewind!.update_id}' AND event_type = 'rewind_progress'`,
        max_results: 200,
      });
      return events.map((e) =>
        shortName(String((e.details["rewind_progress"] as { dataset: string }).dataset)),
      );
    },
  });
}

function datasetMarks(
  update: Update | undefined,
  rewound: readonly string[] | undefined,
): Record<string, DatasetMark> {
  const marks: Record<string, DatasetMark> = {};
  for (const name of rewound ?? []) marks[name] = "rewound";
  for (const progress of Object.values(update?.progress ?? {})) {
    if (!progress.dataset) continue;
    if (progress.status === "FAILED") marks[progress.dataset] = "failed";
    else if (progress.status === "RUNNING" && update && !isTerminal(update.state))
      marks[progress.dataset] = "running";
  }
  return marks;
}

function ReplayBanner(props: {
  pipelineId: string;
  rewind: Update;
  datasets: readonly string[];
  onStarted: (updateId: string) => void;
}) {
  const queryClient = useQueryClient();
  const replay = useMutation({
    mutationFn: () => ebb.startUpdate(props.pipelineId, { cause: "USER_ACTION" }),
    onSuccess: ({ update_id }) => {
      void queryClient.invalidateQueries({ queryKey: ["pipeline", props.pipelineId] });
      props.onStarted(update_id);
    },
  });
  return (
    <div className="note note-rewound" role="status">
      <div>
        <strong>Rewound</strong> {props.datasets.length > 0 ? props.datasets.join(", ") : "the pipeline"} to{" "}
        <span className="mono">
          {props.rewind.rewind_spec?.rewind_point_id ?? props.rewind.rewind_spec?.rewind_timestamp}
        </span>{" "}
        ({formatAgo(props.rewind.end_time)}). Deploy a fix if you need one, then replay: the next run
        reprocesses the data from the rewind point.
      </div>
      <button
        type="button"
        className="button button-primary"
        onClick={() => replay.mutate()}
        disabled={replay.isPending}
      >
        Replay
      </button>
      {replay.error && <span className="bad">{errorText(replay.error)}</span>}
    </div>
  );
}

function DatasetTable(props: {
  datasets: readonly DatasetInfo[];
  pipelineId: string;
  marks: Readonly<Record<string, DatasetMark>>;
}) {
  if (props.datasets.length === 0) return null;
  return (
    <div className="scroll">
      <table className="grid grid-compact datasets">
        <caption className="sr-only">Datasets</caption>
        <thead>
          <tr>
            <th>Dataset</th>
            <th>Type</th>
            <th className="num">Version</th>
            <th className="num">Rows</th>
            <th>Last commit</th>
            <th>Status</th>
          </tr>
        </thead>
        <tbody>
          {props.datasets.map((d) => (
            <tr key={d.name}>
              <td>
                <a
                  href={paths.table(d.identifier, props.pipelineId)}
                  onClick={(e) => {
                    e.preventDefault();
                    navigate(paths.table(d.identifier, props.pipelineId));
                  }}
                >
                  {d.identifier}
                </a>
              </td>
              <td>{d.type.replaceAll("_", " ")}</td>
              <td className="num">{d.version ?? "—"}</td>
              <td className="num">{d.row_count?.toLocaleString("en-US") ?? "—"}</td>
              <td>{formatTime(d.last_commit_time ?? undefined)}</td>
              <td>
                {props.marks[d.name] ? <StateBadge state={props.marks[d.name]!.toUpperCase()} /> : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
