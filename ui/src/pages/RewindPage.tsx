import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { ebb, EbbApiError } from "../api/client.ts";
import { keys, useDatasets, usePipeline, useRewindPoints } from "../api/queries.ts";
import { ConfirmActions } from "../components/ConfirmActions.tsx";
import { Dialog } from "../components/Dialog.tsx";
import { ErrorNote } from "../components/ErrorNote.tsx";
import { RehearseOnBranch } from "../branch/RehearseOnBranch.tsx";
import { formatTime } from "../format.ts";
import { DatasetStep } from "../rewind/DatasetStep.tsx";
import { PointStep } from "../rewind/PointStep.tsx";
import { ProgressStep } from "../rewind/ProgressStep.tsx";
import { ReviewStep } from "../rewind/ReviewStep.tsx";
import { previewRewind } from "../rewind/rewind-preview.ts";
import { rewindSpec, type RewindTarget } from "../rewind/wizard-state.ts";
import { navigate, paths } from "../routing.ts";

/**
 * The rewind wizard (the seed's "Rewind a pipeline using the UI", and a dry-run preview before the
 * commit): 1 point, 2 datasets, 3 review, 4 rewind. Nothing changes before the confirmed Rewind. At the
 * review, the same rewind can be rehearsed on a branch instead (RehearseOnBranch).
 */

const STEPS = ["Rewind point", "Datasets", "Review", "Rewind"] as const;

export function RewindPage({ id, point: atPoint }: { id: string; point?: string | undefined }) {
  const pipeline = usePipeline(id);
  const datasets = useDatasets(id, false);
  const points = useRewindPoints(id);
  const queryClient = useQueryClient();
  const [step, setStep] = useState(0);
  const [target, setTarget] = useState<RewindTarget | undefined>(
    atPoint ? { kind: "point", pointId: atPoint } : undefined,
  );
  const [selected, setSelected] = useState<ReadonlySet<string> | undefined>();
  const [cascade, setCascade] = useState(true);
  const [resetCheckpoints, setResetCheckpoints] = useState(true);
  const [resetLock, setResetLock] = useState<string>();
  const [confirming, setConfirming] = useState(false);
  const [rewindUpdate, setRewindUpdate] = useState<string>();

  const all = datasets.data ?? [];
  const picked = selected ?? new Set(all.map((d) => d.name));
  const choices = { target, selected: picked, cascade, resetCheckpoints };

  // Clearing "Reset all checkpoints" is asked of the API at once: a refusal locks it on, with its reason.
  const checkReset = useMutation({
    mutationFn: () =>
      ebb.startUpdate(id, {
        cause: "USER_ACTION",
        rewind_spec: { ...rewindSpec({ ...choices, resetCheckpoints: false }, all), dry_run: true },
      }),
    onSuccess: () => setResetCheckpoints(false),
    onError: (error) => {
      setResetCheckpoints(true);
      setResetLock(error instanceof EbbApiError ? error.message : String(error));
    },
  });
  useEffect(() => setResetLock(undefined), [target, selected, cascade]);

  const spec = target && picked.size > 0 ? rewindSpec(choices, all) : undefined;
  const preview = useQuery({
    queryKey: ["rewind-preview", id, spec],
    enabled: step === 2 && spec !== undefined,
    queryFn: ({ signal }) => previewRewind(id, spec!, all, signal),
    retry: false,
    staleTime: Infinity,
    gcTime: 0,
    refetchOnWindowFocus: false,
  });

  // Each preview is a dry run, which records a point: the list (which hides those) is read again.
  useEffect(() => {
    if (preview.data) void queryClient.invalidateQueries({ queryKey: keys.points(id) });
  }, [preview.data, queryClient, id]);

  const rewind = useMutation({
    mutationFn: () =>
      ebb.startUpdate(id, { cause: "USER_ACTION", rewind_spec: { ...spec!, dry_run: false } }),
    onSuccess: ({ update_id }) => {
      setConfirming(false);
      setRewindUpdate(update_id);
      setStep(3);
      void queryClient.invalidateQueries({ queryKey: ["pipeline", id] });
    },
  });

  if (pipeline.error) return <ErrorNote error={pipeline.error} />;
  if (!pipeline.data || !datasets.data || !points.data) return <p className="muted">Loading…</p>;
  const point =
    target?.kind === "point" ? points.data.find((p) => p.rewind_point_id === target.pointId) : undefined;
  const canNext =
    step === 0 ? target !== undefined : step === 1 ? picked.size > 0 && !checkReset.isPending : false;
  const affected = preview.data?.datasets.map((d) => d.name) ?? [];

  return (
    <section className="wizard">
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
        /{" "}
        <a
          href={paths.pipeline(id)}
          onClick={(e) => {
            e.preventDefault();
            navigate(paths.pipeline(id));
          }}
        >
          {pipeline.data.name}
        </a>{" "}
        / <span aria-current="page">Rewind</span>
      </nav>
      <h1>Rewind {pipeline.data.name}</h1>
      <ol className="stepper" aria-label="Steps">
        {STEPS.map((label, i) => (
          <li
            key={label}
            className={i === step ? "stepper-current" : i < step ? "stepper-done" : ""}
            aria-current={i === step ? "step" : undefined}
          >
            <span className="stepper-number">{i < step ? "✓" : i + 1}</span>{" "}
            <span className="stepper-label">{label}</span>
          </li>
        ))}
      </ol>
      <div className="wizard-body">
        {step === 0 && <PointStep points={points.data} datasets={all} target={target} onTarget={setTarget} />}
        {step === 1 && (
          <DatasetStep
            datasets={all}
            specs={pipeline.data.spec.definition.datasets}
            selected={picked}
            onSelected={setSelected}
            cascade={cascade}
            onCascade={setCascade}
            resetCheckpoints={resetCheckpoints}
            onResetCheckpoints={(on) => (on ? setResetCheckpoints(true) : checkReset.mutate())}
            resetLock={resetLock}
            checkingReset={checkReset.isPending}
          />
        )}
        {step === 2 && target && (
          <ReviewStep
            target={target}
            point={point}
            resetCheckpoints={resetCheckpoints}
            preview={preview.data}
            checking={preview.isFetching}
            refusal={preview.error}
          />
        )}
        {step === 2 && <RehearseOnBranch pipelineId={id} spec={spec} />}
        {step === 3 && rewindUpdate && (
          <ProgressStep pipelineId={id} updateId={rewindUpdate} datasets={affected} />
        )}
      </div>
      {step < 3 && (
        <div className="wizard-actions">
          <button
            type="button"
            className="button"
            onClick={() => (step === 0 ? navigate(paths.pipeline(id)) : setStep(step - 1))}
          >
            {step === 0 ? "Cancel" : "Back"}
          </button>
          {step < 2 ? (
            <button
              type="button"
              className="button button-primary"
              disabled={!canNext}
              onClick={() => setStep(step + 1)}
            >
              Next
            </button>
          ) : (
            <button
              type="button"
              className="button button-danger"
              disabled={!preview.data || preview.isFetching}
              onClick={() => setConfirming(true)}
            >
              Rewind
            </button>
          )}
        </div>
      )}
      <Dialog title="Rewind now?" open={confirming} onClose={() => setConfirming(false)}>
        <p>
          {affected.length} dataset{affected.length === 1 ? "" : "s"} ({affected.join(", ")}) will be restored
          to{" "}
          {target?.kind === "timestamp" ? (
            <>
              {formatTime(target.timestamp)} (<code className="time-request">{target.timestamp}</code>)
            </>
          ) : (
            <>the rewind point {point ? `of ${formatTime(point.timestamp)}` : ""}</>
          )}
          {resetCheckpoints ? ", with their checkpoints" : ""}. Each restore is a new table version, so the
          current state stays in the history.
        </p>
        <ErrorNote error={rewind.error} />
        <ConfirmActions
          onCancel={() => setConfirming(false)}
          onConfirm={() => rewind.mutate()}
          pending={rewind.isPending}
        >
          Rewind {affected.length} dataset{affected.length === 1 ? "" : "s"}
        </ConfirmActions>
      </Dialog>
    </section>
  );
}
