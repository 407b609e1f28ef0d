import type { Update } from "../api/types.ts";
import { StateBadge } from "../components/StateBadge.tsx";
import { formatDuration, formatTime } from "../format.ts";
import { duration, updateKind } from "./update-kind.ts";

/** The updates, newest first: state, what it did, cause, start and duration (bar scaled to the longest). */
export function UpdatesTimeline(props: {
  updates: readonly Update[];
  selected: string | undefined;
  onSelect: (updateId: string) => void;
}) {
  const now = Date.now();
  const longest = Math.max(1, ...props.updates.map((u) => duration(u, now) ?? 0));
  if (props.updates.length === 0) return <p className="muted pad">No updates yet: press Run.</p>;
  return (
    <ol className="timeline" aria-label="Updates">
      {props.updates.map((u) => {
        const ms = duration(u, now);
        return (
          <li key={u.update_id}>
            <button
              type="button"
              className={`timeline-item ${props.selected === u.update_id ? "timeline-item-selected" : ""}`}
              aria-pressed={props.selected === u.update_id}
              onClick={() => props.onSelect(u.update_id)}
            >
              <span className="timeline-state">
                <StateBadge state={u.state} />
              </span>
              <span className="timeline-main">
                <span className="timeline-kind">{updateKind(u)}</span>
                <span className="subtle">
                  {formatTime(u.creation_time)} · {u.cause.toLowerCase().replaceAll("_", " ")} · v
                  {u.definition_version}
                </span>
              </span>
              <span className="timeline-duration">
                <span className="bar">
                  <span
                    className={`bar-fill bar-${u.state.toLowerCase()}`}
                    style={{ width: `${Math.max(4, ((ms ?? 0) / longest) * 100)}%` }}
                  />
                </span>
                <span className="subtle">{formatDuration(ms)}</span>
              </span>
            </button>
          </li>
        );
      })}
    </ol>
  );
}
