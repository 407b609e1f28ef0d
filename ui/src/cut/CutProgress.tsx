import { useQueries } from "@tanstack/react-query";
import type { CutRewindResult, OrderedRunResult } from "../../../shared/client/ebb-client.ts";
import type { UpdateInfo } from "../api/types.ts";
import { ebb } from "../api/client.ts";
import { isTerminal, keys } from "../api/queries.ts";
import { StateBadge } from "../components/StateBadge.tsx";
import { navigate, paths } from "../routing.ts";

const POLL_MS = 1000;

/** The cut's rewind updates, one per pipeline (upstreams first), each polled until it ends. */
export function useCutUpdates(cut: CutRewindResult | undefined): (UpdateInfo | undefined)[] {
  return useQueries({
    queries: (cut?.pipelines ?? []).map((p) => ({
      queryKey: keys.update(p.pipeline_id, p.update_id ?? ""),
      queryFn: async () => (await ebb.getUpdate(p.pipeline_id, p.update_id!)).update,
      enabled: p.update_id !== undefined,
      refetchInterval: (query: { state: { data?: UpdateInfo } }) =>
        query.state.data && isTerminal(query.state.data.state) ? false : POLL_MS,
    })),
  }).map((q) => q.data);
}

/** The cut's rewinds: each pipeline's update and its state. */
export function CutRewindProgress(props: {
  cut: CutRewindResult;
  updates: readonly (UpdateInfo | undefined)[];
}) {
  return (
    <ol className="progress-list" aria-label="Rewinds">
      {props.cut.pipelines.map((p, i) => {
        const update = props.updates[i];
        return (
          <li
            key={p.pipeline_id}
            data-pipeline={p.name}
            className={update?.state === "COMPLETED" ? "progress-done" : ""}
          >
            <PipelineLink id={p.pipeline_id} name={p.name} />{" "}
            {update ? <StateBadge state={update.state} /> : "starting…"}
            {update?.error && <span className="bad"> {update.error.message}</span>}
          </li>
        );
      })}
    </ol>
  );
}

/**
 * An ordered run: each pipeline's run, found by the request id its update carries (`ordered_run`),
 * which Ebb starts as the one before it completes; "waiting" until then.
 */
export function OrderedRunProgress({ run }: { run: OrderedRunResult }) {
  const runs = useQueries({
    queries: run.pipelines.map((p) => ({
      queryKey: ["pipeline", p.pipeline_id, "ordered-run", run.request_id],
      queryFn: async () =>
        (await ebb.listUpdates(p.pipeline_id, { max_results: 10 })).updates.find(
          (u) => u.ordered_run?.request_id === run.request_id,
        ) ?? null,
      refetchInterval: (query: { state: { data?: UpdateInfo | null } }) =>
        query.state.data && isTerminal(query.state.data.state) ? false : POLL_MS,
    })),
  });
  return (
    <ol className="progress-list" aria-label="Ordered run">
      {run.pipelines.map((p, i) => {
        const update = runs[i]?.data;
        return (
          <li
            key={p.pipeline_id}
            data-pipeline={p.name}
            className={update?.state === "COMPLETED" ? "progress-done" : ""}
          >
            {p.position}/{run.pipelines.length} <PipelineLink id={p.pipeline_id} name={p.name} />{" "}
            {update ? <StateBadge state={update.state} /> : <span className="subtle">waiting</span>}
            {update?.error && <span className="bad"> {update.error.message}</span>}
          </li>
        );
      })}
    </ol>
  );
}

function PipelineLink({ id, name }: { id: string; name: string }) {
  return (
    <a
      href={paths.pipeline(id)}
      onClick={(e) => {
        e.preventDefault();
        navigate(paths.pipeline(id));
      }}
    >
      {name}
    </a>
  );
}
