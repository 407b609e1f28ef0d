import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { ebb } from "../api/client.ts";
import type { DatasetInfo } from "../api/types.ts";
import { Dialog } from "../components/Dialog.tsx";
import { ErrorNote } from "../components/ErrorNote.tsx";
import { navigate, paths } from "../routing.ts";

/**
 * Run (incremental), the menu beside it (full refresh, run with options, rewind), and Stop. Every
 * choice is one start-update request body of api.md; the API checks it.
 */
export function RunControls(props: {
  pipelineId: string;
  datasets: readonly DatasetInfo[];
  running: boolean;
  onStarted: (updateId: string) => void;
}) {
  const queryClient = useQueryClient();
  const [menu, setMenu] = useState(false);
  const [options, setOptions] = useState(false);
  const menuRef = useRef<HTMLDivElement>(null);
  const start = useMutation({
    mutationFn: (body: Record<string, unknown>) =>
      ebb.startUpdate(props.pipelineId, { cause: "USER_ACTION", ...body }),
    onSuccess: ({ update_id }) => {
      void queryClient.invalidateQueries({ queryKey: ["pipeline", props.pipelineId] });
      props.onStarted(update_id);
      setOptions(false);
    },
  });
  const stop = useMutation({
    mutationFn: () => ebb.stopPipeline(props.pipelineId),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ["pipeline", props.pipelineId] }),
  });

  useEffect(() => {
    if (!menu) return;
    const close = (e: MouseEvent | KeyboardEvent) => {
      if (e instanceof KeyboardEvent ? e.key === "Escape" : !menuRef.current?.contains(e.target as Node))
        setMenu(false);
    };
    document.addEventListener("mousedown", close);
    document.addEventListener("keydown", close);
    menuRef.current?.querySelector<HTMLButtonElement>("[role=menuitem]")?.focus();
    return () => {
      document.removeEventListener("mousedown", close);
      document.removeEventListener("keydown", close);
    };
  }, [menu]);

  return (
    <div className="run-controls">
      {props.running && (
        <button
          type="button"
          className="button button-danger"
          onClick={() => stop.mutate()}
          disabled={stop.isPending}
        >
          Stop
        </button>
      )}
      <div className="split" ref={menuRef}>
        <button
          type="button"
          className="button button-primary split-main"
          disabled={props.running || start.isPending}
          onClick={() => start.mutate({})}
        >
          Run pipeline
        </button>
        <button
          type="button"
          className="button button-primary split-toggle"
          aria-label="More run options"
          aria-haspopup="menu"
          aria-expanded={menu}
          onClick={() => setMenu(!menu)}
        >
          ▾
        </button>
        {menu && (
          <div className="menu" role="menu">
            <button
              type="button"
              role="menuitem"
              disabled={props.running}
              onClick={() => {
                setMenu(false);
                start.mutate({ full_refresh: true });
              }}
            >
              Run with full refresh
            </button>
            <button
              type="button"
              role="menuitem"
              onClick={() => {
                setMenu(false);
                setOptions(true);
              }}
            >
              Run with options…
            </button>
            <hr />
            <button
              type="button"
              role="menuitem"
              onClick={() => {
                setMenu(false);
                navigate(paths.rewind(props.pipelineId));
              }}
            >
              Rewind pipeline…
            </button>
            <button
              type="button"
              role="menuitem"
              onClick={() => {
                setMenu(false);
                navigate(paths.cut(props.pipelineId));
              }}
            >
              Rewind with other pipelines…
            </button>
          </div>
        )}
      </div>
      {!options && <ErrorNote error={start.error ?? stop.error} />}
      <RunOptionsDialog
        open={options}
        onClose={() => setOptions(false)}
        datasets={props.datasets}
        pending={start.isPending}
        error={start.error}
        onRun={(body) => start.mutate(body)}
      />
    </div>
  );
}

type Mode = "incremental" | "refresh_selection" | "full_refresh_selection" | "reset" | "reset_checkpoints";

const MODES: readonly { mode: Mode; label: string; help: string }[] = [
  {
    mode: "refresh_selection",
    label: "Refresh selection",
    help: "Run only the selected datasets, incrementally.",
  },
  {
    mode: "full_refresh_selection",
    label: "Full refresh of selection",
    help: "Recompute the selected datasets from scratch.",
  },
  {
    mode: "reset",
    label: "Reset selection",
    help: "Clear the selected tables and checkpoints, then run them again (refresh RESET).",
  },
  {
    mode: "reset_checkpoints",
    label: "Reset checkpoints",
    help: "Reset the flows' checkpoints of the selection; table contents are kept.",
  },
];

function RunOptionsDialog(props: {
  open: boolean;
  onClose: () => void;
  datasets: readonly DatasetInfo[];
  pending: boolean;
  error: unknown;
  onRun: (body: Record<string, unknown>) => void;
}) {
  const [mode, setMode] = useState<Mode>("refresh_selection");
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [resetMode, setResetMode] = useState("");
  const names = [...selected];
  const body = (): Record<string, unknown> => {
    const withReset = resetMode ? { reset_mode: resetMode } : {};
    switch (mode) {
      case "refresh_selection":
        return { refresh_selection: names };
      case "full_refresh_selection":
        return { full_refresh_selection: names, ...withReset };
      case "reset":
        return { refresh: "RESET", selection: names, ...withReset };
      case "reset_checkpoints":
        return {
          reset_checkpoint_selection: props.datasets
            .filter((d) => selected.has(d.name))
            .flatMap((d) => d.flows),
        };
      default:
        return {};
    }
  };
  return (
    <Dialog title="Run with options" open={props.open} onClose={props.onClose}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          props.onRun(body());
        }}
      >
        <fieldset className="choices">
          <legend>What to run</legend>
          {MODES.map((m) => (
            <label key={m.mode} className="choice">
              <input type="radio" name="mode" checked={mode === m.mode} onChange={() => setMode(m.mode)} />
              <span>
                <strong>{m.label}</strong>
                <span className="subtle"> {m.help}</span>
              </span>
            </label>
          ))}
        </fieldset>
        <fieldset className="choices">
          <legend>Datasets</legend>
          {props.datasets.map((d) => (
            <label key={d.name} className="choice choice-inline">
              <input
                type="checkbox"
                checked={selected.has(d.name)}
                onChange={(e) => {
                  const next = new Set(selected);
                  if (e.target.checked) next.add(d.name);
                  else next.delete(d.name);
                  setSelected(next);
                }}
              />
              {d.name}
            </label>
          ))}
        </fieldset>
        {(mode === "full_refresh_selection" || mode === "reset") && (
          <label className="field field-inline">
            <span>Reset mode</span>
            <select aria-label="Reset mode" value={resetMode} onChange={(e) => setResetMode(e.target.value)}>
              <option value="">each dataset's own</option>
              <option value="DROP">DROP</option>
              <option value="TRUNCATE">TRUNCATE</option>
            </select>
          </label>
        )}
        <ErrorNote error={props.error} />
        <div className="actions">
          <button type="button" className="button" onClick={props.onClose}>
            Cancel
          </button>
          <button
            type="submit"
            className="button button-primary"
            disabled={props.pending || selected.size === 0}
          >
            Run
          </button>
        </div>
      </form>
    </Dialog>
  );
}
