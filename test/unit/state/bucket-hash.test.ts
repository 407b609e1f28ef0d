import { createHash } from "node:crypto";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Sandbox } from "../../../shared/engine/sandbox.ts";
import {
  openStateVersion,
  StateFormatError,
  type StateSchema,
  type StateVersion,
} from "../../../shared/state/index.ts";
import { MemoryObjectStore } from "../../../shared/object-store/memory-object-store.ts";

const flow = { pipelineId: "p1", flowId: "dedup" };
const byId: StateSchema = { key: [{ name: "id", type: "BIGINT" }], value: [] };
const byName: StateSchema = { key: [{ name: "name", type: "VARCHAR" }], value: [] };

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await Sandbox.open();
});
afterAll(async () => {
  await sandbox.close();
});

/** `fib32` as bucket-hash.ts states it, over 64-bit two's complement values (NULL as 0). */
function fib32(values: readonly (bigint | null)[], buckets: number): number {
  const low32 = (1n << 32n) - 1n;
  let h = 0n;
  for (const value of values) {
    const v = BigInt.asUintN(64, value ?? 0n);
    const hi = v >> 32n;
    const lo = v & low32;
    h = (((((h ^ hi) * 2246822519n) & low32) ^ lo) * 2654435769n) & low32;
  }
  return Number((h * BigInt(buckets)) >> 32n);
}

async function bucketsBySql(schema: StateSchema, rows: string, buckets: number): Promise<number[]> {
  const version = await openStateVersion({ store: new MemoryObjectStore(), flow });
  const table = version.table("t", schema, { buckets });
  const result = await sandbox.rows(`SELECT ${table.bucketSql()} AS b FROM (${rows}) ORDER BY __i`);
  return result.map((r) => Number(r["b"]));
}

async function writeOne(schema: StateSchema, rowSql: string): Promise<StateVersion> {
  const store = new MemoryObjectStore();
  const empty = await openStateVersion({ store, flow });
  const writer = empty.writer();
  writer.upsert(empty.table("t", schema), rowSql);
  const { version } = await writer.commit(sandbox, 1);
  return openStateVersion({ store, flow, version: version! });
}

describe("the state's bucket hash", () => {
  it("fib32 in DuckDB is the function its documentation states, for any integers, NULL and bucket count", async () => {
    const int64 = fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n });
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.option(int64, { nil: null }), fc.option(fc.integer(), { nil: null })), {
          minLength: 1,
          maxLength: 20,
        }),
        fc.integer({ min: 1, max: 100 }),
        async (rows, buckets) => {
          const schema: StateSchema = {
            key: [
              { name: "a", type: "BIGINT" },
              { name: "b", type: "INTEGER" },
            ],
            value: [],
          };
          const sql = rows
            .map(
              ([a, b], i) =>
                `SELECT (${a === null ? "NULL" : `${a}`})::BIGINT AS a, (${b === null ? "NULL" : b})::INTEGER AS b, ${i} AS __i`,
            )
            .join(" UNION ALL ");
          const expected = rows.map(([a, b]) => fib32([a, b === null ? null : BigInt(b)], buckets));
          expect(await bucketsBySql(schema, sql, buckets)).toEqual(expected);
        },
      ),
      { numRuns: 30 },
    );
  });

  it("pins a few buckets, so a change of the function is a failing test and not mixed state", async () => {
    const sql = [0, 1, 2, 16, -1, 1_000_000]
      .map((id, i) => `SELECT (${id})::BIGINT AS id, ${i} AS __i`)
      .join(" UNION ALL ");
    expect(await bucketsBySql(byId, sql, 16)).toEqual([0, 9, 3, 14, 8, 15]);
    const names = ["a", "b"].map((n, i) => `SELECT '${n}' AS name, ${i} AS __i`).join(" UNION ALL ");
    // md5-json: the digest's first 8 bytes as a little-endian number (DuckDB's `md5_number_upper`).
    const md5Json = (name: string) =>
      Number(createHash("md5").update(JSON.stringify({ name })).digest().readBigUInt64LE(0) % 16n);
    expect(await bucketsBySql(byName, names, 16)).toEqual([md5Json("a"), md5Json("b")]);
    expect([md5Json("a"), md5Json("b")]).toEqual([8, 12]);
  });

  it("spreads sequential and strided ids evenly over the buckets", async () => {
    for (const stride of [1, 16, 1024, 2 ** 32]) {
      const rows = await sandbox.rows(
        `SELECT b, count(*)::INTEGER AS n FROM (SELECT ${(await writeOne(byId, "SELECT 1::BIGINT AS id")).table("t", byId).bucketSql()} AS b ` +
          `FROM (SELECT range * ${stride} AS id FROM range(16000))) GROUP BY b`,
      );
      expect(rows).toHaveLength(16);
      for (const r of rows) expect(Math.abs(Number(r["n"]) - 1000)).toBeLessThan(100);
    }
  });

  it("a new table records its hash; a table without one is md5-json; an unknown one is refused", async () => {
    const ints = await writeOne(byId, "SELECT 1::BIGINT AS id");
    expect(ints.manifest.tables["t"]!.hash).toBe("fib32");
    const strings = await writeOne(byName, "SELECT 'a' AS name");
    expect(strings.manifest.tables["t"]!.hash).toBe("md5-json");

    // A manifest of the writer before hashes were named (it bucketed every key by md5-json).
    const store = new MemoryObjectStore();
    const empty = await openStateVersion({ store, flow });
    const writer = empty.writer();
    writer.upsert(empty.table("t", byId), "SELECT range AS id FROM range(100)");
    const { version } = await writer.commit(sandbox, 1);
    const manifest = JSON.parse(new TextDecoder().decode(await store.get(version!))) as {
      tables: Record<string, { hash?: string }>;
    };
    delete manifest.tables["t"]!.hash;
    await store.put(version!, new TextEncoder().encode(JSON.stringify(manifest)));
    const legacy = await openStateVersion({ store, flow, version: version! });
    expect(legacy.table("t", byId).shape.hash).toBe("md5-json");

    manifest.tables["t"]!.hash = "xxh3";
    await store.put(version!, new TextEncoder().encode(JSON.stringify(manifest)));
    const refused = openStateVersion({ store, flow, version: version! });
    await expect(refused).rejects.toThrow(StateFormatError);
    await expect(refused).rejects.toThrow(/t table is bucketed by a hash this version of Ebb does not know/);
  });
});
