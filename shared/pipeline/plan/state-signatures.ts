import { z } from "zod";
import { expressionText } from "../expression-text.ts";
import type { WindowSpec } from "./windowed-flow-plan.ts";

/**
 * What a plan's kept state means, as the text each state version keeps in its meta: a state kept
 * under another signature cannot be continued (semantics.md "Replay", INCOMPATIBLE_STATE). The text
 * is the canonical JSON of the plan's state-deciding parts, computed once when the plan is compiled;
 * its shape is the one Ebb has always written, so the states already kept keep matching.
 */

/** A windowed aggregation's: the window, the grouping keys and the aggregates (parse trees as JSON). */
export function windowStateSignature(parts: {
  readonly window: WindowSpec;
  readonly keys: readonly string[];
  readonly aggregates: readonly { readonly kind: string; readonly text: string }[];
}): string {
  return JSON.stringify({ window: parts.window, keys: parts.keys, aggregates: parts.aggregates });
}

/** A stream-stream join's: its type, time range and ON condition (parse tree as JSON, no positions). */
export function joinStateSignature(parts: {
  readonly type: "inner" | "left";
  readonly range: { readonly loMicros: number; readonly hiMicros: number };
  readonly condition: unknown;
}): string {
  const condition = JSON.stringify(parts.condition, (key, value: unknown) =>
    key === "query_location" ? undefined : value,
  );
  return JSON.stringify({ type: parts.type, range: parts.range, condition });
}

const joinSignatureSchema = z.object({
  type: z.enum(["inner", "left"]),
  range: z.object({ loMicros: z.number(), hiMicros: z.number() }),
  condition: z.string().optional(),
});

const minutes = (micros: number) => `${micros / 60_000_000} minutes`;

/** The stored and the wanted join of an incompatible state, as the refusal says them. */
export function describeJoinChange(stored: string, wanted: string): { stored: string; wanted: string } {
  const parse = (signature: string) => {
    try {
      return joinSignatureSchema.safeParse(JSON.parse(signature)).data;
    } catch {
      return undefined;
    }
  };
  const was = parse(stored);
  const now = parse(wanted);
  const describe = (join: z.infer<typeof joinSignatureSchema> | undefined) => {
    if (!join) return "a join Ebb cannot read back";
    return `an ${join.type === "left" ? "LEFT OUTER" : "INNER"} join with source's event time from ${minutes(join.range.loMicros)} to ${minutes(join.range.hiMicros)} after the joined stream's`;
  };
  const sameShape =
    was !== undefined &&
    now !== undefined &&
    was.type === now.type &&
    was.range.loMicros === now.range.loMicros &&
    was.range.hiMicros === now.range.hiMicros;
  return {
    stored: describe(was),
    wanted: `${describe(now)}${sameShape ? " under another ON condition (other join keys)" : ""}`,
  };
}

type WindowSignature = {
  readonly window: WindowSpec;
  readonly keys: readonly string[];
  readonly aggregates: readonly { readonly text: string }[];
};

/** The parts of two window signatures that differ, as the state holds them and as the definition needs them. */
export function describeWindowChange(stored: string, wanted: string): [string, string] {
  const [was, now] = [JSON.parse(stored), JSON.parse(wanted)] as [WindowSignature, WindowSignature];
  const parts: [string, string][] = [];
  if (JSON.stringify(was.window) !== JSON.stringify(now.window))
    parts.push([describeWindow(was.window), describeWindow(now.window)]);
  const keys = (s: WindowSignature) => `grouping keys ${(s.keys ?? []).map(sketch).join(", ") || "none"}`;
  if (JSON.stringify(was.keys) !== JSON.stringify(now.keys)) parts.push([keys(was), keys(now)]);
  const aggregates = (s: WindowSignature) =>
    `aggregates ${(s.aggregates ?? []).map((a) => sketch(a.text)).join(", ")}`;
  if (JSON.stringify(was.aggregates) !== JSON.stringify(now.aggregates))
    parts.push([aggregates(was), aggregates(now)]);
  // Signatures that differ in nothing described (another shape, from an older Ebb): name the windows.
  if (parts.length === 0) parts.push([describeWindow(was.window), describeWindow(now.window)]);
  return [parts.map(([a]) => a).join("; "), parts.map(([, b]) => b).join("; ")];
}

/** A signature's expression (its parse tree as JSON text) as the SQL it was written as. */
function sketch(text: string): string {
  try {
    return expressionText(JSON.parse(text));
  } catch {
    return text; // not a serialized tree: already text
  }
}

function describeWindow({ column, sizeMicros, slideMicros }: WindowSpec): string {
  return sizeMicros === slideMicros
    ? `windows of ${minutes(sizeMicros)} on ${column}`
    : `windows of ${minutes(sizeMicros)} sliding by ${minutes(slideMicros)} on ${column}`;
}
