import { useQuery } from "@tanstack/react-query";
import { useEffect } from "react";
import { ebb } from "../api/client.ts";
import { useUpdate } from "../api/queries.ts";
import { ErrorNote } from "../components/ErrorNote.tsx";
import { StateBadge } from "../components/StateBadge.tsx";
import { shortName } from "../format.ts";
import { navigate, paths } from "../routing.ts";

/** Step 4: the rewind running, dataset by dataset (its `rewind_progress` events), then what comes next. */
export function ProgressStep(props: { pipelineId: string; updateId: string; datasets: readonly string[] }) {
  const update = useUpdate(props.pipelineId, props.updateId).data;
  const done = update?.state === "COMPLETED";
  const progress = useQuery({
    queryKey: ["pipeline", props.pipelineId, "rewind-progress", props.updateId],
    queryFn: async () =>
      (
        await ebb.events(props.pipelineId, {
          filter: `origin.update_id = '${props.updateId}' AND event_type = 'rewind_progress'`,
          max_results: 200,
        })
      ).events,
    refetchInterval: done ? false : 1000,
  });
  // The last datasets' events may land after the previous poll: read them once more at the end.
  const { refetch } = progress;
  useEffect(() => {
    if (done) void refetch();
  }, [done, refetch]);
  const rewound = new Map(
    (progress.data ?? []).map((e) => {
      const d = e.details["rewind_progress"] as { dataset: string; target_version: number };
      return [shortName(d.dataset), d.target_version] as const;
    }),
  );
  return (
    <div className="step" aria-live="polite">
      <p>
        Rewind update <span className="mono">{props.updateId}</span>{" "}
        {update && <StateBadge state={update.state} />}
      </p>
      <ul className="progress-list">
        {props.datasets.map((name) => (
          <li key={name} className={rewound.has(name) ? "progress-done" : ""}>
            <span aria-hidden="true">{rewound.has(name) ? "✓" : "…"}</span> {name}
            {rewound.has(name) ? ` restored to version ${rewound.get(name)}` : " waiting"}
          </li>
        ))}
      </ul>
      {update?.error && <ErrorNote error={new Error(update.error.message)} />}
      {done && (
        <div className="note note-rewound" role="status">
          <div>
            <strong>Rewound.</strong> The tables are back at the rewind point; nothing has been reprocessed
            yet. Deploy a fix if you need one, then replay from the pipeline page.
          </div>
          <button
            type="button"
            className="button button-primary"
            onClick={() => navigate(paths.pipeline(props.pipelineId))}
          >
            Go to the pipeline
          </button>
        </div>
      )}
    </div>
  );
}
