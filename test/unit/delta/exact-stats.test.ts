import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeltaTable } from "../../../shared/delta/delta-table.ts";
import { JsonNumber } from "../../../shared/delta/log/exact-json.ts";
import { parseFileStats } from "../../../shared/delta/log/stats-json.ts";
import { commitKey } from "../../../shared/delta/log/log-paths.ts";
import type { StructType } from "../../../shared/delta/table/schema.ts";
import { DuckSession } from "../../../shared/duck/duck-session.ts";
import { MemoryObjectStore } from "../../../shared/object-store/memory-object-store.ts";
import { exemptFromProtocolCheck } from "../../support/protocol-check.ts";

/**
 * Per-file statistics of `long` and `decimal(p,s)` columns against a reference model of exact
 * integers (a decimal as its unscaled bigint): the written bounds are the exact minimum and maximum
 * of the file's values, in the type's range, so they contain every value. And MERGE, which prunes
 * files by those bounds, updates keys past 2^53 instead of inserting duplicates.
 */

const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;
const SAFE = 2n ** 53n;

/** Longs biased to where a double rounds: the extremes and around ±2^53. */
const longArb = fc.oneof(
  fc.bigInt({ min: LONG_MIN, max: LONG_MAX }),
  fc.constantFrom(LONG_MIN, LONG_MAX, LONG_MIN + 1n, LONG_MAX - 1n, SAFE, SAFE + 1n, -SAFE - 1n, 0n),
  fc.bigInt({ min: SAFE - 5000n, max: SAFE + 5000n }),
  fc.bigInt({ min: 1717171717123456000n, max: 1717171717123457000n }),
);

interface DecimalCase {
  readonly precision: number;
  readonly scale: number;
  /** Unscaled values: the decimal is value / 10^scale. */
  readonly values: readonly bigint[];
}

const decimalArb: fc.Arbitrary<DecimalCase> = fc.integer({ min: 1, max: 38 }).chain((precision) =>
  fc.record({
    precision: fc.constant(precision),
    scale: fc.integer({ min: 0, max: precision }),
    values: fc.array(
      fc.oneof(
        fc.bigInt({ min: -(10n ** BigInt(precision)) + 1n, max: 10n ** BigInt(precision) - 1n }),
        fc.constantFrom(-(10n ** BigInt(precision)) + 1n, 10n ** BigInt(precision) - 1n, 0n),
      ),
      { minLength: 1, maxLength: 6 },
    ),
  }),
);

/** The decimal literal of `unscaled` / 10^scale. */
function decimalText(unscaled: bigint, scale: number): string {
  const sign = unscaled < 0n ? "-" : "";
  const digits = (unscaled < 0n ? -unscaled : unscaled).toString().padStart(scale + 1, "0");
  return scale === 0 ? `${sign}${digits}` : `${sign}${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}

/** The unscaled value of a JSON number at `scale`; throws if it has more fraction digits. */
function unscaledOf(bound: unknown, scale: number): bigint {
  expect(bound).toBeInstanceOf(JsonNumber);
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec((bound as JsonNumber).text)!;
  expect(match).not.toBeNull();
  const [, sign, whole, fraction = "", exponent = "0"] = match;
  const shift = scale - fraction.length + Number(exponent);
  let digits = BigInt(whole! + fraction);
  if (shift >= 0) digits *= 10n ** BigInt(shift);
  else {
    expect(digits % 10n ** BigInt(-shift)).toBe(0n);
    digits /= 10n ** BigInt(-shift);
  }
  return sign === "-" ? -digits : digits;
}

const min = (values: readonly bigint[]) => values.reduce((a, b) => (b < a ? b : a));
const max = (values: readonly bigint[]) => values.reduce((a, b) => (b > a ? b : a));

function valuesSql(columns: string, rows: readonly string[][]): string {
  return `SELECT * FROM (VALUES ${rows.map((row) => `(${row.join(", ")})`).join(", ")}) t(${columns})`;
}

describe("exact statistics for long and decimal columns", () => {
  let duck: DuckSession;
  beforeAll(async () => {
    duck = await DuckSession.open();
  });
  afterAll(() => duck.close());

  async function statsOfOneFile(schema: StructType, sql: string) {
    const store = new MemoryObjectStore(() => 1_000);
    const table = await DeltaTable.create(store, { schema, rows: { sql } }, { clock: () => 1_000, duck });
    try {
      const files = [...table.snapshot.files.values()];
      expect(files).toHaveLength(1);
      return parseFileStats(files[0]!.stats)!;
    } finally {
      await table.close();
    }
  }

  it("writes the exact min and max of random longs, extremes included", async () => {
    const schema: StructType = {
      type: "struct",
      fields: [{ name: "l", type: "long", nullable: true, metadata: {} }],
    };
    await fc.assert(
      fc.asyncProperty(fc.array(longArb, { minLength: 1, maxLength: 8 }), async (values) => {
        const stats = await statsOfOneFile(
          schema,
          valuesSql(
            "l",
            values.map((v) => [`CAST('${v}' AS BIGINT)`]),
          ),
        );
        const lo = unscaledOf(stats.minValues.l, 0);
        const hi = unscaledOf(stats.maxValues.l, 0);
        expect([lo, hi]).toEqual([min(values), max(values)]);
        expect(lo >= LONG_MIN && hi <= LONG_MAX).toBe(true);
      }),
      // Nearly every case holds a value a double rounds (the arbitraries lean to them): 20 find it.
      { numRuns: Number(process.env["EXACT_STATS_RUNS"] ?? 20) },
    );
  });

  it("writes the exact min and max of random decimals up to (38, s)", async () => {
    await fc.assert(
      fc.asyncProperty(decimalArb, async ({ precision, scale, values }) => {
        const type = `decimal(${precision},${scale})`;
        const schema: StructType = {
          type: "struct",
          fields: [{ name: "d", type: type as never, nullable: true, metadata: {} }],
        };
        const stats = await statsOfOneFile(
          schema,
          valuesSql(
            "d",
            values.map((v) => [`CAST('${decimalText(v, scale)}' AS DECIMAL(${precision},${scale}))`]),
          ),
        );
        const lo = unscaledOf(stats.minValues.d, scale);
        const hi = unscaledOf(stats.maxValues.d, scale);
        expect([lo, hi]).toEqual([min(values), max(values)]);
        const limit = 10n ** BigInt(precision);
        expect(lo > -limit && hi < limit).toBe(true);
      }),
      // Most cases have a precision past a double's 15 digits, and values at its edges: 20 find it.
      { numRuns: Number(process.env["EXACT_STATS_RUNS"] ?? 20) },
    );
  });

  it("MERGE on long keys past 2^53 updates matching rows and never duplicates them", async () => {
    const schema: StructType = {
      type: "struct",
      fields: [
        { name: "k", type: "long", nullable: false, metadata: {} },
        { name: "v", type: "integer", nullable: true, metadata: {} },
      ],
    };
    const keysArb = fc.uniqueArray(longArb, { minLength: 1, maxLength: 6, selector: (k) => k.toString() });
    await fc.assert(
      fc.asyncProperty(
        fc.array(keysArb, { minLength: 1, maxLength: 3 }),
        keysArb,
        async (batches, mergeKeys) => {
          const store = new MemoryObjectStore(() => 1_000);
          const rowsSql = (keys: readonly bigint[], v: number) =>
            valuesSql(
              "k, v",
              keys.map((k) => [`CAST('${k}' AS BIGINT)`, `CAST(${v} AS INTEGER)`]),
            );
          // One file per batch, so pruning has files to tell apart; a key is in at most one batch.
          const seen = new Set<string>();
          const files = batches.map((keys) => keys.filter((k) => !seen.has(`${k}`) && seen.add(`${k}`)));
          const table = await DeltaTable.create(store, { schema }, { clock: () => 1_000, duck });
          try {
            const model = new Map<string, number>();
            for (const [i, keys] of files.entries()) {
              if (keys.length === 0) continue;
              await table.append({ sql: rowsSql(keys, i) });
              for (const k of keys) model.set(k.toString(), i);
            }
            await table.merge({
              source: { sql: rowsSql(mergeKeys, 100) },
              on: ["k"],
              whenMatched: { update: "all" },
              whenNotMatched: "insert",
            });
            for (const k of mergeKeys) model.set(k.toString(), 100);
            const rows = (await table.scan()).map((r) => [String(r.k), Number(r.v)] as const);
            expect(rows.sort()).toEqual([...model.entries()].sort());
          } finally {
            await table.close();
          }
        },
      ),
      { numRuns: Number(process.env["EXACT_STATS_RUNS"] ?? 40) },
    );
  });

  it("MERGE still finds keys in files whose long bounds an older writer rounded through a double", async () => {
    const schema: StructType = {
      type: "struct",
      fields: [
        { name: "k", type: "long", nullable: false, metadata: {} },
        { name: "v", type: "integer", nullable: true, metadata: {} },
      ],
    };
    const store = exemptFromProtocolCheck(new MemoryObjectStore(() => 1_000));
    const sql = (v: number, keys = ["1717171717123456789", "9223372036854775807"]) =>
      valuesSql(
        "k, v",
        keys.map((k) => [`CAST('${k}' AS BIGINT)`, `${v}`]),
      );
    // One file per key, so a wrong bound prunes the only file that holds it.
    const created = await DeltaTable.create(
      store,
      { schema, rows: { sql: sql(1, ["1717171717123456789"]) } },
      { duck },
    );
    await created.append({ sql: sql(1, ["9223372036854775807"]) });
    await created.close();
    // Stats as Ebb wrote them before they were exact: both bounds rounded, the max outside the type.
    for (const version of [0, 1]) {
      const log = new TextDecoder().decode(await store.get(commitKey(version)));
      const rounded = log
        .replaceAll('\\"k\\":1717171717123456789', '\\"k\\":1717171717123456800')
        .replaceAll('\\"k\\":9223372036854775807', '\\"k\\":9223372036854776000');
      expect(rounded).not.toBe(log);
      await store.put(commitKey(version), new TextEncoder().encode(rounded));
    }
    const table = await DeltaTable.open(store, { duck });
    try {
      await table.merge({
        source: { sql: sql(2) },
        on: ["k"],
        whenMatched: { update: "all" },
        whenNotMatched: "insert",
      });
      const rows = (await table.scan()).map((r) => [String(r.k), Number(r.v)]);
      expect(rows.sort()).toEqual([
        ["1717171717123456789", 2],
        ["9223372036854775807", 2],
      ]);
    } finally {
      await table.close();
    }
  });
});
