import { createHash } from "node:crypto";

/**
 * A reference model of AUTO CDC, written apart from the engine's SQL: it folds every event a target
 * has seen, from scratch, in sequence order (the engine applies batches incrementally against its
 * per-key state). The rules are those README "AUTO CDC" documents.
 */

export interface CdcEvent {
  /** NULL for a truncate. */
  readonly k: number | null;
  readonly seq: number;
  /** Upsert, Delete, Truncate. */
  readonly op: "U" | "D" | "T";
  readonly a: number | null;
  readonly b: string | null;
}

export interface ModelOptions {
  readonly ignoreNullUpdates: boolean;
  /** SCD type 2: the columns whose change starts a new version. */
  readonly tracked: readonly ("a" | "b")[];
  /** Whether `b` is written to the targets (else it is as if every event's `b` were NULL). @default true */
  readonly writesB?: boolean;
}

export interface Scd1Row {
  readonly k: number;
  readonly a: number | null;
  readonly b: string | null;
}

export interface Scd2Row extends Scd1Row {
  readonly __START_AT: number;
  readonly __END_AT: number | null;
}

/** The tie hash: md5 of the written row's JSON, keys then values (what DuckDB's `to_json` writes). */
export function tie(event: CdcEvent, writesB: boolean): string {
  const row = writesB ? { k: event.k, a: event.a, b: event.b } : { k: event.k, a: event.a };
  return createHash("md5").update(JSON.stringify(row)).digest("hex");
}

/** One event per key and sequence: a delete beats an upsert; then the higher tie hash. */
function perKey(events: readonly CdcEvent[], writesB: boolean): Map<number, CdcEvent[]> {
  const byKey = new Map<number, Map<number, CdcEvent>>();
  for (const event of events) {
    if (event.op === "T" || event.k === null) continue;
    const seqs = byKey.get(event.k) ?? new Map<number, CdcEvent>();
    byKey.set(event.k, seqs);
    const held = seqs.get(event.seq);
    const wins =
      !held ||
      (event.op === "D" && held.op !== "D") ||
      (event.op === held.op && event.op === "U" && tie(event, writesB) > tie(held, writesB));
    if (wins) seqs.set(event.seq, writesB ? event : { ...event, b: null });
  }
  return new Map(
    [...byKey].map(([k, seqs]) => [k, [...seqs.values()].sort((x, y) => x.seq - y.seq)] as const),
  );
}

export function scd1Model(events: readonly CdcEvent[], options: ModelOptions): Scd1Row[] {
  const truncatedTo = Math.max(-Infinity, ...events.filter((e) => e.op === "T").map((e) => e.seq));
  const rows: Scd1Row[] = [];
  for (const [k, keyEvents] of perKey(events, options.writesB ?? true)) {
    let row: Scd1Row | undefined;
    for (const event of keyEvents) {
      if (event.seq <= truncatedTo) continue;
      if (event.op === "D") row = undefined;
      else if (options.ignoreNullUpdates && row) row = { k, a: event.a ?? row.a, b: event.b ?? row.b };
      else row = { k, a: event.a, b: event.b };
    }
    if (row) rows.push(row);
  }
  return rows.sort((x, y) => x.k - y.k);
}

export function scd2Model(events: readonly CdcEvent[], options: ModelOptions): Scd2Row[] {
  const rows: Scd2Row[] = [];
  for (const [k, keyEvents] of perKey(events, options.writesB ?? true)) {
    let open: { start: number; a: number | null; b: string | null } | undefined;
    /** What the last upsert since the last delete left (for ignore_null_updates). */
    let last: { a: number | null; b: string | null } | undefined;
    const close = (end: number | null) => {
      if (open) rows.push({ k, a: open.a, b: open.b, __START_AT: open.start, __END_AT: end });
      open = undefined;
    };
    for (const event of keyEvents) {
      if (event.op === "D") {
        close(event.seq);
        last = undefined;
        continue;
      }
      const values =
        options.ignoreNullUpdates && last
          ? { a: event.a ?? last.a, b: event.b ?? last.b }
          : { a: event.a, b: event.b };
      last = values;
      if (open && options.tracked.every((column) => open![column] === values[column])) {
        open = { ...open, ...values };
      } else {
        close(event.seq);
        open = { start: event.seq, ...values };
      }
    }
    close(null);
  }
  return rows.sort((x, y) => x.k - y.k || x.__START_AT - y.__START_AT);
}
