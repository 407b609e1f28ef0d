import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import type { CutRewindResult, OrderedRunResult } from "../../../shared/client/ebb-client.ts";
import { ebb } from "../api/client.ts";
import { usePipelines, useRewindPoints } from "../api/queries.ts";
import { ConfirmActions } from "../components/ConfirmActions.tsx";
import { Dialog } from "../components/Dialog.tsx";
import { ErrorNote } from "../components/ErrorNote.tsx";
import { TimeInput } from "../components/TimeInput.tsx";
import { CutPlanTable } from "../cut/CutPlanTable.tsx";
import { CutRewindProgress, OrderedRunProgress, useCutUpdates } from "../cut/CutProgress.tsx";
import { formatTime, shortName } from "../format.ts";
import { requestTimestamp } from "../time/zoned-time.ts";

/**
 * Several pipelines rewound to one cut, then replayed in order (docs/rewind-across-pipelines.md):
 * 1 pick the pipelines (Ebb orders them by their reads: an ordered run's dry run), 2 the cut — a point
 * of the upstream or a time —, 3 the plan (the cut's dry run: every pipeline's point and tables, or
 * the refusal naming its pipeline), 4 confirmed, the rewinds, upstreams first, 5 the replay in order.
 * Nothing changes before the confirmed Rewind.
 */
export function CutRewindPage({ from }: { from?: string | undefined }) {
  const pipelines = usePipelines();
  const queryClient = useQueryClient();
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set(from ? [from] : []));
  const [mode, setMode] = useState<"point" | "time">("point");
  const [pointId, setPointId] = useState<string>();
  const [time, setTime] = useState<number>();
  const [confirming, setConfirming] = useState(false);
  const [cut, setCut] = useState<CutRewindResult>();
  const [replay, setReplay] = useState<OrderedRunResult>();

  const ids = (pipelines.data ?? []).map((p) => p.pipeline_id).filter((id) => selected.has(id));
  // The graph Ebb knows, for these pipelines: their order and who reads whom.
  const order = useQuery({
    queryKey: ["cut-order", ids],
    enabled: ids.length >= 2,
    queryFn: () => ebb.startOrderedRun({ pipeline_ids: ids, dry_run: true }),
    retry: false,
  });
  const upstream = order.data?.pipelines[0];
  const points = useRewindPoints(upstream?.pipeline_id ?? "", upstream !== undefined);
  const livePoints = (points.data ?? []).filter((p) => p.kind !== "dry-run");
  const target =
    mode === "point"
      ? pointId && livePoints.some((p) => p.rewind_point_id === pointId)
        ? { rewind_point_id: pointId }
        : undefined
      : time !== undefined
        ? { rewind_timestamp: requestTimestamp(time) }
        : undefined;

  const plan = useMutation({
    mutationFn: () => ebb.rewindToCut({ pipeline_ids: ids, ...target, dry_run: true }),
  });
  const rewind = useMutation({
    mutationFn: () => ebb.rewindToCut({ pipeline_ids: ids, ...target }),
    onSuccess: (answer) => {
      setConfirming(false);
      setCut(answer);
      void queryClient.invalidateQueries({ queryKey: ["pipeline"] });
    },
  });
  const updates = useCutUpdates(cut);
  const rewound = cut !== undefined && updates.length > 0 && updates.every((u) => u?.state === "COMPLETED");
  const startReplay = useMutation({
    mutationFn: () => ebb.startOrderedRun({ pipeline_ids: cut!.pipelines.map((p) => p.pipeline_id) }),
    onSuccess: setReplay,
  });

  const toggle = (id: string, on: boolean) => {
    const next = new Set(selected);
    if (on) next.add(id);
    else next.delete(id);
    setSelected(next);
    plan.reset();
  };
  const names = new Map((pipelines.data ?? []).map((p) => [p.pipeline_id, p.name]));

  if (pipelines.error) return <ErrorNote error={pipelines.error} />;
  if (!pipelines.data) return <p className="muted">Loading…</p>;
  return (
    <section className="wizard">
      <h1>Rewind pipelines to one cut</h1>
      <p className="muted">
        Pipelines that read each other&apos;s tables are rewound together, so no downstream row depends on an
        upstream row the rewind removes; then they replay upstreams first.
      </p>

      <h2>1. Pipelines</h2>
      <fieldset className="step" disabled={cut !== undefined}>
        <legend className="sr-only">Pipelines to rewind</legend>
        <ul className="plain-list">
          {pipelines.data.map((p) => (
            <li key={p.pipeline_id}>
              <label>
                <input
                  type="checkbox"
                  checked={selected.has(p.pipeline_id)}
                  onChange={(e) => toggle(p.pipeline_id, e.target.checked)}
                />{" "}
                {p.name}
              </label>
            </li>
          ))}
        </ul>
        {ids.length < 2 && <p className="muted">Pick two or more pipelines.</p>}
        <ErrorNote error={order.error} title="Ebb cannot order these pipelines:" />
        {order.data && (
          <ol className="plain-list cut-order" aria-label="Order">
            {order.data.pipelines.map((p) => (
              <li key={p.pipeline_id} data-pipeline={p.name}>
                {p.position}. {p.name}
                {p.reads.length > 0 && (
                  <span className="subtle">
                    {" "}
                    reads{" "}
                    {p.reads
                      .map((r) => `${names.get(r.pipeline_id) ?? r.pipeline_id}.${shortName(r.dataset)}`)
                      .join(", ")}
                  </span>
                )}
              </li>
            ))}
          </ol>
        )}
      </fieldset>

      {upstream && (
        <>
          <h2>2. The cut</h2>
          <fieldset className="step" disabled={cut !== undefined}>
            <legend className="sr-only">Where to cut</legend>
            <div className="segmented" role="group" aria-label="Cut by">
              <button type="button" aria-pressed={mode === "point"} onClick={() => setMode("point")}>
                A point of {upstream.name}
              </button>
              <button type="button" aria-pressed={mode === "time"} onClick={() => setMode("time")}>
                A time
              </button>
            </div>
            {mode === "point" ? (
              <label className="field">
                <span>Rewind point of {upstream.name}</span>
                <select
                  value={pointId ?? ""}
                  onChange={(e) => {
                    setPointId(e.target.value || undefined);
                    plan.reset();
                  }}
                >
                  <option value="">Choose a point…</option>
                  {livePoints.map((p) => (
                    <option key={p.rewind_point_id} value={p.rewind_point_id}>
                      {formatTime(p.timestamp)} — {p.message}
                    </option>
                  ))}
                </select>
              </label>
            ) : (
              <TimeInput
                label="Cut at"
                onInstant={(instant) => {
                  setTime(instant);
                  plan.reset();
                }}
              />
            )}
            <div className="actions">
              <button
                type="button"
                className="button"
                disabled={target === undefined || plan.isPending}
                onClick={() => plan.mutate()}
              >
                {plan.isPending ? "Planning…" : "Preview the plan"}
              </button>
            </div>
          </fieldset>
        </>
      )}

      {(plan.data || plan.error) && (
        <>
          <h2>3. The plan</h2>
          <ErrorNote error={plan.error} title="The plan is refused; nothing was rewound." />
          {plan.data && (
            <>
              <CutPlanTable plan={plan.data} />
              {!cut && (
                <div className="actions">
                  <button type="button" className="button button-primary" onClick={() => setConfirming(true)}>
                    Rewind
                  </button>
                </div>
              )}
            </>
          )}
        </>
      )}

      <Dialog title="Rewind these pipelines now?" open={confirming} onClose={() => setConfirming(false)}>
        <p>
          Each pipeline&apos;s tables go back to its point in the plan, upstreams first. Their rows since are
          taken back until the replay.
        </p>
        <ErrorNote error={rewind.error} title="Refused; nothing was rewound." />
        <ConfirmActions
          onCancel={() => setConfirming(false)}
          onConfirm={() => rewind.mutate()}
          pending={rewind.isPending}
        >
          Rewind {ids.length} pipelines
        </ConfirmActions>
      </Dialog>

      {cut && (
        <>
          <h2>4. Rewinding</h2>
          <p className="subtle">
            Cut <span className="mono">{cut.request_id}</span>
          </p>
          <CutRewindProgress cut={cut} updates={updates} />
          {rewound && !replay && (
            <div className="note note-rewound" role="status">
              <div>
                <strong>Rewound to one cut.</strong> Deploy a fix if you need one, then replay the pipelines
                in order: each starts when the one before it completes.
              </div>
              <button
                type="button"
                className="button button-primary"
                disabled={startReplay.isPending}
                onClick={() => startReplay.mutate()}
              >
                Replay in order
              </button>
            </div>
          )}
          <ErrorNote error={startReplay.error} title="The replay is refused:" />
        </>
      )}
      {replay && (
        <>
          <h2>5. Replaying in order</h2>
          <p className="subtle">
            Ordered run <span className="mono">{replay.request_id}</span>
          </p>
          <OrderedRunProgress run={replay} />
        </>
      )}
    </section>
  );
}
