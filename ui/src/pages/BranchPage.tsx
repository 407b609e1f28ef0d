import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import type { PublishedBranch } from "../../../shared/client/ebb-client.ts";
import { ebb } from "../api/client.ts";
import { keys, useBranch, useBranchDiff, usePipeline } from "../api/queries.ts";
import { BranchDiff } from "../branch/BranchDiff.tsx";
import { ConfirmActions } from "../components/ConfirmActions.tsx";
import { Dialog } from "../components/Dialog.tsx";
import { ErrorNote } from "../components/ErrorNote.tsx";
import { RouteLink } from "../components/RouteLink.tsx";
import { formatAgo, formatTime } from "../format.ts";
import { navigate, paths } from "../routing.ts";

/** The API's bounds on `max_samples` (docs/branches.md "Diff"). */
const SAMPLE_CHOICES = [0, 5, 10, 20, 50] as const;
const DEFAULT_SAMPLES = 5;

/**
 * A branch (docs/branches.md): its point, its tables and their versions (live's at the point, the
 * branch's now), its diff against live per table, and what can be done with it: replay on it, publish
 * it (live := branch, undone by rewinding to the point the answer names) or discard it. Every refusal
 * is shown as the API words it.
 */
export function BranchPage({ pipelineId, name }: { pipelineId: string; name: string }) {
  const queryClient = useQueryClient();
  const pipeline = usePipeline(pipelineId);
  const branch = useBranch(pipelineId, name);
  const [samples, setSamples] = useState<number>(DEFAULT_SAMPLES);
  const diff = useBranchDiff(pipelineId, name, samples);
  const [confirm, setConfirm] = useState<"publish" | "discard">();
  const [published, setPublished] = useState<PublishedBranch>();

  const refresh = () => queryClient.invalidateQueries({ queryKey: ["pipeline", pipelineId] });
  const replay = useMutation({
    mutationFn: () => ebb.startUpdate(pipelineId, { cause: "USER_ACTION", branch: name }),
    onSuccess: ({ update_id }) => {
      void refresh();
      navigate(paths.pipeline(pipelineId, undefined, update_id));
    },
  });
  const publish = useMutation({
    mutationFn: () => ebb.publishBranch(pipelineId, name),
    onSuccess: (answer) => {
      setConfirm(undefined);
      setPublished(answer);
      void refresh();
    },
  });
  const discard = useMutation({
    mutationFn: () => ebb.discardBranch(pipelineId, name),
    onSuccess: () => {
      void queryClient.resetQueries({ queryKey: keys.branches(pipelineId) });
      navigate(paths.pipeline(pipelineId, "branches"));
    },
  });
  const close = () => {
    setConfirm(undefined);
    publish.reset();
    discard.reset();
  };

  const pipelineName = pipeline.data?.name ?? "pipeline";
  return (
    <section>
      <nav className="crumbs" aria-label="Breadcrumb">
        <RouteLink to={paths.pipelines()}>Pipelines</RouteLink> /{" "}
        <RouteLink to={paths.pipeline(pipelineId)}>{pipelineName}</RouteLink> /{" "}
        <RouteLink to={paths.pipeline(pipelineId, "branches")}>Branches</RouteLink> /{" "}
        <span aria-current="page">{name}</span>
      </nav>
      <div className="page-header">
        <h1>
          Branch <span className="mono">{name}</span>
        </h1>
        {branch.data && (
          <div className="run-controls">
            <button
              type="button"
              className="button button-primary"
              disabled={replay.isPending}
              onClick={() => replay.mutate()}
            >
              Replay on this branch
            </button>
            <button type="button" className="button" onClick={() => setConfirm("publish")}>
              Publish…
            </button>
            <button type="button" className="button button-danger" onClick={() => setConfirm("discard")}>
              Discard…
            </button>
          </div>
        )}
      </div>
      <ErrorNote error={branch.error} />
      <ErrorNote error={replay.error} title="The replay is refused:" />
      {published && <PublishedNote pipelineId={pipelineId} published={published} />}
      {branch.data && (
        <>
          <dl className="facts facts-wide">
            <dt>At the point</dt>
            <dd>
              {formatTime(branch.data.point_timestamp)}{" "}
              {branch.data.rewind_point_id && (
                <span className="subtle mono">{branch.data.rewind_point_id}</span>
              )}
            </dd>
            <dt>Made</dt>
            <dd>{formatAgo(branch.data.created_at)}</dd>
            <dt>Flows</dt>
            <dd>
              {branch.data.flows
                .map((f) => `${f.flow}: live's checkpoint ${f.live_seq}, the branch's ${f.branch_seq}`)
                .join(", ") || "none"}
            </dd>
          </dl>
          <div className="scroll">
            <table className="grid grid-compact" aria-label="Branch tables">
              <thead>
                <tr>
                  <th>Table</th>
                  <th>From</th>
                  <th className="num">Live version at the point</th>
                  <th className="num">Branch version</th>
                </tr>
              </thead>
              <tbody>
                {branch.data.tables.map((t) => (
                  <tr key={t.name} data-table={t.name}>
                    <td className="mono">{t.name}</td>
                    <td>{t.from === "POINT" ? "the point" : "live as it was"}</td>
                    <td className="num">{t.source_version ?? "empty"}</td>
                    <td className="num">{t.branch_version ?? "—"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}

      <div className="pane-header">
        <h2>Branch against live</h2>
        <label className="field field-inline">
          <span>Samples per kind</span>
          <select value={samples} onChange={(e) => setSamples(Number(e.target.value))}>
            {SAMPLE_CHOICES.map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </label>
        <button
          type="button"
          className="button"
          disabled={diff.isFetching}
          onClick={() => void diff.refetch()}
        >
          {diff.isFetching ? "Comparing…" : "Compare again"}
        </button>
      </div>
      <ErrorNote error={diff.error} title="The diff failed:" />
      {diff.data ? <BranchDiff diff={diff.data} /> : !diff.error && <p className="muted">Comparing…</p>}

      <Dialog title={`Publish ${name} to live?`} open={confirm === "publish"} onClose={close}>
        <p>
          Each live table becomes the branch&apos;s (one RESTORE commit each, no data copied), and its flows
          continue from the branch&apos;s checkpoints. A rewind point is captured first: rewinding to it
          undoes the publish.
        </p>
        <ErrorNote error={publish.error} title="Refused; nothing was published." />
        <ConfirmActions onCancel={close} onConfirm={() => publish.mutate()} pending={publish.isPending}>
          Publish {name}
        </ConfirmActions>
      </Dialog>
      <Dialog title={`Discard ${name}?`} open={confirm === "discard"} onClose={close}>
        <p>
          The branch&apos;s logs and record are deleted; live is untouched. Files only the branch named go at
          the table&apos;s next VACUUM past the retention.
        </p>
        <ErrorNote error={discard.error} title="Refused; nothing was discarded." />
        <ConfirmActions onCancel={close} onConfirm={() => discard.mutate()} pending={discard.isPending}>
          Discard {name}
        </ConfirmActions>
      </Dialog>
    </section>
  );
}

/** The publish's answer: each table's versions, and the way back (the point captured before it). */
function PublishedNote({ pipelineId, published }: { pipelineId: string; published: PublishedBranch }) {
  return (
    <div className="note note-rewound" role="status">
      <div>
        <strong>Published.</strong> Live gets the branch's{" "}
        {published.tables.map((t) => `${t.table} v${t.branch_version ?? "—"}`).join(", ")}.{" "}
        {published.update_id && (
          <>
            As update{" "}
            <RouteLink to={paths.pipeline(pipelineId, undefined, published.update_id)}>
              {published.update_id}
            </RouteLink>
            .{" "}
          </>
        )}
        {published.rewind_point_id ? (
          <>
            The way back: rewind to the point{" "}
            <RouteLink to={paths.rewind(pipelineId, published.rewind_point_id)}>
              <span className="mono">{published.rewind_point_id}</span>
            </RouteLink>
            .
          </>
        ) : (
          "No rewind point was captured (live had no table yet): nothing to go back to."
        )}
      </div>
    </div>
  );
}
