import { useInfiniteQuery } from "@tanstack/react-query";
import { Fragment, useState } from "react";
import { ebb, errorText } from "../api/client.ts";
import type { EventInfo } from "../api/types.ts";
import { TimeInput } from "../components/TimeInput.tsx";
import { formatTime } from "../format.ts";
import { EVENT_LOG_TYPES as TYPES } from "../../../shared/api/event-types.ts";
import { EMPTY_FILTER, eventFilter, type EventFilterForm } from "./event-filter.ts";

/** The event log: filtered by the API (its grammar), paged, each event's details readable. */

const LEVELS = ["INFO", "WARN", "ERROR", "METRICS"];

export function EventLog({ pipelineId, datasets }: { pipelineId: string; datasets: readonly string[] }) {
  const [form, setForm] = useState<EventFilterForm>(EMPTY_FILTER);
  const [clears, setClears] = useState(0); // remakes the time field, which keeps its own text
  const filter = eventFilter(form);
  const events = useInfiniteQuery({
    queryKey: ["pipeline", pipelineId, "events", filter ?? ""],
    queryFn: ({ pageParam }) =>
      ebb.events(
        pipelineId,
        pageParam
          ? { page_token: pageParam, max_results: 50 }
          : { max_results: 50, ...(filter ? { filter } : {}) },
      ),
    initialPageParam: "",
    getNextPageParam: (last) => last.next_page_token || undefined,
    refetchInterval: 5000,
  });
  const rows = events.data?.pages.flatMap((p) => p.events) ?? [];
  return (
    <section aria-label="Event log">
      <form className="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter events">
        <fieldset className="filter-levels">
          <legend className="sr-only">Level</legend>
          {LEVELS.map((level) => (
            <label key={level} className={`chip ${form.levels.includes(level) ? "chip-on" : ""}`}>
              <input
                type="checkbox"
                checked={form.levels.includes(level)}
                onChange={(e) =>
                  setForm({
                    ...form,
                    levels: e.target.checked
                      ? [...form.levels, level]
                      : form.levels.filter((l) => l !== level),
                  })
                }
              />
              {level}
            </label>
          ))}
        </fieldset>
        <label className="field field-inline">
          <span>Type</span>
          <select
            aria-label="Type"
            value={form.eventType}
            onChange={(e) => setForm({ ...form, eventType: e.target.value })}
          >
            <option value="">any</option>
            {TYPES.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        </label>
        <label className="field field-inline">
          <span>Dataset</span>
          <select
            aria-label="Dataset"
            value={form.dataset}
            onChange={(e) => setForm({ ...form, dataset: e.target.value })}
          >
            <option value="">any</option>
            {datasets.map((d) => (
              <option key={d}>{d}</option>
            ))}
          </select>
        </label>
        <label className="field field-inline">
          <span>Update</span>
          <input
            className="mono"
            size={28}
            placeholder="update id"
            value={form.updateId}
            onChange={(e) => setForm({ ...form, updateId: e.target.value })}
          />
        </label>
        <TimeInput
          key={clears}
          label="Since"
          initial={form.after === "" ? undefined : Date.parse(form.after)}
          onInstant={(instant) =>
            setForm({ ...form, after: instant === undefined ? "" : new Date(instant).toISOString() })
          }
        />
        {filter && (
          <button
            type="button"
            className="button button-quiet"
            onClick={() => {
              setForm(EMPTY_FILTER);
              setClears((n) => n + 1);
            }}
          >
            Clear
          </button>
        )}
      </form>
      {filter && <p className="subtle mono filter-text">filter: {filter}</p>}
      {events.error && (
        <div className="note note-bad" role="alert">
          {errorText(events.error)}
        </div>
      )}
      <div className="scroll">
        <table className="grid grid-compact events">
          <thead>
            <tr>
              <th>Time</th>
              <th>Level</th>
              <th>Type</th>
              <th>Dataset</th>
              <th>Message</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((event) => (
              <EventRow key={event.id} event={event} />
            ))}
          </tbody>
        </table>
      </div>
      {!events.isPending && rows.length === 0 && <p className="muted pad">No events match.</p>}
      {events.hasNextPage && (
        <button
          type="button"
          className="button"
          onClick={() => void events.fetchNextPage()}
          disabled={events.isFetchingNextPage}
        >
          Load older events
        </button>
      )}
    </section>
  );
}

function EventRow({ event }: { event: EventInfo }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <tr className={`event-${event.level.toLowerCase()}`} data-event-type={event.event_type}>
        <td className="nowrap">{formatTime(event.timestamp)}</td>
        <td>
          <span className={`level level-${event.level.toLowerCase()}`}>{event.level}</span>
        </td>
        <td className="mono">{event.event_type}</td>
        <td>{String(event.origin["dataset_name"] ?? "")}</td>
        <td>
          <button type="button" className="link-button" aria-expanded={open} onClick={() => setOpen(!open)}>
            {event.message}
          </button>
        </td>
      </tr>
      {open && (
        <tr className="event-details">
          <td colSpan={5}>
            <EventDetails event={event} />
          </td>
        </tr>
      )}
    </>
  );
}

type Json = Record<string, unknown>;

function EventDetails({ event }: { event: EventInfo }) {
  const details = event.details as Json;
  const summary = details["rewind_summary"] as
    | {
        dry_run: boolean;
        timestamp: string;
        datasets: { identifier: string; table_version: number }[];
        flows: { flow: string; seq: number }[];
      }
    | undefined;
  const flow = details["flow_progress"] as { status: string; metrics?: Json } | undefined;
  const error = (event as unknown as { error?: { message?: string; exceptions?: { message?: string }[] } })
    .error;
  return (
    <div className="event-detail">
      <dl className="facts">
        <dt>Event</dt>
        <dd className="mono">{event.id}</dd>
        {event.origin["update_id"] !== undefined && (
          <>
            <dt>Update</dt>
            <dd className="mono">{String(event.origin["update_id"])}</dd>
          </>
        )}
        {event.origin["flow_name"] !== undefined && (
          <>
            <dt>Flow</dt>
            <dd className="mono">{String(event.origin["flow_name"])}</dd>
          </>
        )}
      </dl>
      {summary && (
        <div>
          <p>
            {summary.dry_run ? "Rewind point" : "Completed rewind"} at {formatTime(summary.timestamp)}
          </p>
          <div className="scroll">
            <table className="grid grid-compact">
              <thead>
                <tr>
                  <th>Dataset</th>
                  <th className="num">Table version</th>
                </tr>
              </thead>
              <tbody>
                {summary.datasets.map((d) => (
                  <tr key={d.identifier}>
                    <td>{d.identifier}</td>
                    <td className="num">{d.table_version}</td>
                  </tr>
                ))}
                {summary.flows.map((f) => (
                  <tr key={f.flow}>
                    <td className="mono">flow {f.flow}</td>
                    <td className="num">checkpoint {f.seq}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </div>
      )}
      {flow && (
        <dl className="facts">
          <dt>Status</dt>
          <dd>{flow.status}</dd>
          {Object.entries(flow.metrics ?? {}).map(([name, value]) => (
            <Fragment key={name}>
              <dt>{name}</dt>
              <dd>{String(value)}</dd>
            </Fragment>
          ))}
        </dl>
      )}
      {error && (
        <div className="note note-bad">
          {error.message ?? error.exceptions?.map((x) => x.message).join("; ")}
        </div>
      )}
      {!summary && !flow && <pre className="json">{JSON.stringify(event.details, null, 2)}</pre>}
    </div>
  );
}
