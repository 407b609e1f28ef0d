import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ebb, errorText } from "../api/client.ts";
import { keys, usePipeline, usePipelines } from "../api/queries.ts";
import type { PipelineStatus } from "../api/types.ts";
import { Dialog } from "../components/Dialog.tsx";
import { StateBadge } from "../components/StateBadge.tsx";
import { formatAgo, formatTime } from "../format.ts";
import { navigate, paths } from "../routing.ts";

/** Every pipeline with its state, last update and rewind status; create one from a definition. */
export function PipelinesPage() {
  const pipelines = usePipelines();
  const [creating, setCreating] = useState(false);
  return (
    <section>
      <div className="page-header">
        <h1>Pipelines</h1>
        <button type="button" className="button button-primary" onClick={() => setCreating(true)}>
          Create pipeline
        </button>
      </div>
      {pipelines.isPending && <p className="muted">Loading…</p>}
      {pipelines.error && <div className="note note-bad">{errorText(pipelines.error)}</div>}
      {pipelines.data && pipelines.data.length === 0 && (
        <div className="empty">
          <p>No pipelines yet.</p>
          <p className="muted">
            Create one from a YAML or JSON definition, or with <code>npx ebb pipelines create file.yaml</code>
            .
          </p>
        </div>
      )}
      {pipelines.data && pipelines.data.length > 0 && (
        <div className="scroll">
          <table className="grid">
            <thead>
              <tr>
                <th>Name</th>
                <th>State</th>
                <th>Last update</th>
                <th>Rewind</th>
                <th>Definition</th>
                <th>Modified</th>
              </tr>
            </thead>
            <tbody>
              {pipelines.data.map((p) => (
                <PipelineRow key={p.pipeline_id} status={p} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      <CreatePipelineDialog open={creating} onClose={() => setCreating(false)} />
    </section>
  );
}

function PipelineRow({ status }: { status: PipelineStatus }) {
  const query = usePipeline(status.pipeline_id);
  const detail = query.data;
  const last = detail?.latest_updates?.[0];
  const rewind = detail?.rewind;
  // Until the pipeline's details arrive (seconds under load) its runs and points are unknown, not none.
  const unknown = detail ? undefined : query.error ? (
    <span className="muted" title={errorText(query.error)}>
      unavailable
    </span>
  ) : (
    <span className="muted" aria-busy="true">
      loading…
    </span>
  );
  return (
    <tr>
      <td>
        <a
          href={paths.pipeline(status.pipeline_id)}
          onClick={(e) => {
            e.preventDefault();
            navigate(paths.pipeline(status.pipeline_id));
          }}
        >
          {status.name}
        </a>
        <div className="subtle mono">{status.pipeline_id}</div>
      </td>
      <td>
        <StateBadge state={status.state} />
      </td>
      <td>
        {unknown ??
          (last ? (
            <>
              <StateBadge state={last.state} /> <span className="muted">{formatAgo(last.creation_time)}</span>
            </>
          ) : (
            <span className="muted">never run</span>
          ))}
      </td>
      <td>
        {unknown ??
          (rewind?.blocked ? (
            <StateBadge state="BLOCKED" title="A rewind did not finish: rewind again to unblock" />
          ) : rewind?.latest_rewind_point ? (
            <span className="muted">point {formatAgo(rewind.latest_rewind_point.timestamp)}</span>
          ) : (
            <span className="muted">no points</span>
          ))}
      </td>
      <td className="mono">v{status.definition_version}</td>
      <td className="muted">{formatTime(status.last_modified)}</td>
    </tr>
  );
}

const EXAMPLE = `name: orders
catalog: demo
schema: sales
configuration:
  pipelines.rewind.enabled: "true"
datasets:
  - type: streaming_table
    name: raw_orders
    flows:
      - name: ingest
        source: { type: auto_loader, path: /path/to/landing, format: json }
        sql: SELECT * FROM source
`;

/**
 * A definition as the CLI reads it (settings at the top, then datasets), sent in the API's shape. The
 * YAML reader loads only when someone creates a pipeline: it is most of the app's weight.
 */
async function createBody(text: string): Promise<Record<string, unknown>> {
  const { readDefinitionText } = await import("../../../shared/pipeline/parse-definition.ts");
  const { datasets, ...settings } = readDefinitionText(text) as Record<string, unknown>;
  return { ...settings, definition: { datasets } };
}

function CreatePipelineDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const [text, setText] = useState("");
  const queryClient = useQueryClient();
  const create = useMutation({
    mutationFn: async () => ebb.createPipeline(await createBody(text)),
    onSuccess: ({ pipeline_id }) => {
      void queryClient.invalidateQueries({ queryKey: keys.pipelines });
      onClose();
      navigate(paths.pipeline(pipeline_id));
    },
  });
  return (
    <Dialog title="Create pipeline" open={open} onClose={onClose} wide>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          create.mutate();
        }}
      >
        <label className="field">
          <span>Definition (YAML or JSON)</span>
          <textarea
            className="code-input"
            rows={16}
            spellCheck={false}
            placeholder={EXAMPLE}
            value={text}
            onChange={(e) => setText(e.target.value)}
          />
        </label>
        {create.error && (
          <div className="note note-bad" role="alert">
            {errorText(create.error)}
          </div>
        )}
        <div className="actions">
          <button type="button" className="button" onClick={onClose}>
            Cancel
          </button>
          <button
            type="submit"
            className="button button-primary"
            disabled={create.isPending || text.trim() === ""}
          >
            Create
          </button>
        </div>
      </form>
    </Dialog>
  );
}
