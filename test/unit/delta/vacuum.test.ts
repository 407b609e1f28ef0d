import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeltaTable } from "../../../shared/delta/delta-table.ts";
import { RetentionTooShortError } from "../../../shared/delta/errors.ts";
import { parseIntervalMs } from "../../../shared/delta/table/table-properties.ts";
import { isVacuumable } from "../../../shared/delta/operations/vacuum.ts";
import { DuckSession } from "../../../shared/duck/duck-session.ts";
import { MemoryObjectStore } from "../../../shared/object-store/memory-object-store.ts";
import { listAllKeys } from "../../../shared/object-store/object-store.ts";
import { byId, field, ManualClock, schemaOf } from "./delta-test-kit.ts";

const HOUR = 3_600_000;
const schema = schemaOf(field("id", "long", false), field("value", "string"));

describe("VACUUM rules (pure)", () => {
  it("parses Delta's interval syntax", () => {
    expect(parseIntervalMs("interval 7 days")).toBe(168 * HOUR);
    expect(parseIntervalMs("interval 1 week")).toBe(168 * HOUR);
    expect(parseIntervalMs("INTERVAL 1 day 12 hours")).toBe(36 * HOUR);
    expect(parseIntervalMs("30 minutes")).toBe(30 * 60_000);
    expect(() => parseIntervalMs("interval 1 month")).toThrow(/not an interval/);
  });

  it("considers data and change-data files, never the log or hidden files", () => {
    expect(isVacuumable("part-1.snappy.parquet")).toBe(true);
    expect(isVacuumable("day=2026-01-01/part-1.snappy.parquet")).toBe(true);
    expect(isVacuumable("_under=1/part-1.snappy.parquet")).toBe(true);
    expect(isVacuumable("_change_data/cdc-1.snappy.parquet")).toBe(true);
    expect(isVacuumable("_delta_log/00000000000000000000.json")).toBe(false);
    expect(isVacuumable("_delta_log/00000000000000000010.checkpoint.parquet")).toBe(false);
    expect(isVacuumable(".part-1.snappy.parquet.crc")).toBe(false);
    expect(isVacuumable("_tmp/part-1.parquet")).toBe(false);
  });

  it("considers what a dead Spark job left in its committer's _temporary folder, whatever its own names", () => {
    const scratch = "spark/3-1a2b3c4d/_temporary/0/_temporary/attempt_202612061800_0001_m_000000_0";
    expect(isVacuumable(`${scratch}/part-00000-1.c000.snappy.parquet`)).toBe(true);
    expect(isVacuumable(`${scratch}/.part-00000-1.c000.snappy.parquet.crc`)).toBe(true);
    expect(isVacuumable("spark/3-1a2b3c4d/_temporary/0/task_1/part-0.parquet")).toBe(true);
    expect(isVacuumable("_temporary")).toBe(false);
    expect(isVacuumable("_delta_log/_temporary/0/x.json")).toBe(false);
    expect(isVacuumable(".hidden/_temporary/0/x.parquet")).toBe(false);
  });
});

describe("VACUUM", () => {
  let duck: DuckSession;
  beforeAll(async () => {
    duck = await DuckSession.open();
  });
  afterAll(() => duck.close());

  async function tableWithHistory() {
    const clock = new ManualClock();
    const store = new MemoryObjectStore(clock.read);
    const table = await DeltaTable.create(
      store,
      {
        schema,
        rows: { rows: [{ id: 1, value: "v0" }] },
        properties: { "delta.enableChangeDataFeed": "true" },
      },
      { clock: clock.read, duck },
    );
    const v0Files = [...table.snapshot.files.keys()];
    clock.advance(HOUR);
    await table.update({ set: { value: "'v1'" } }); // version 1: rewrites the file, writes a cdc file
    const v1Files = [...table.snapshot.files.keys()];
    clock.advance(HOUR);
    await table.overwrite({ rows: [{ id: 2, value: "v2" }] }); // version 2
    return { clock, store, table, v0Files, v1Files };
  }

  it("deletes unreferenced files older than the retention, keeps the log, and dry-runs as a plan", async () => {
    const { clock, store, table, v0Files, v1Files } = await tableWithHistory();
    const logBefore = (await listAllKeys(store, "_delta_log/")).map((o) => o.key);
    clock.advance(168 * HOUR + 30 * 60_000); // v0 files removed and cdc written 169.5 h ago, v1 files removed 168.5 h ago
    const dryRun = await table.vacuum({ dryRun: true });
    expect(dryRun.deleted).toBe(false);
    const planned = dryRun.filesToDelete.map((f) => f.key).sort();
    expect(planned).toEqual([...v0Files, ...v1Files, ...(await cdcKeys(store))].sort());
    expect(await store.head(v0Files[0]!)).toBeDefined();
    const done = await table.vacuum();
    expect(done.filesToDelete).toEqual(dryRun.filesToDelete);
    for (const key of planned) expect(await store.head(key)).toBeUndefined();
    expect((await listAllKeys(store, "_delta_log/")).map((o) => o.key)).toEqual(logBefore);
    expect(byId(await table.scan())).toEqual([{ id: 2, value: "v2" }]);
    await table.close();
  });

  it("keeps files within the retention window", async () => {
    const { clock, table, v1Files } = await tableWithHistory();
    clock.advance(167 * HOUR); // v1 files were removed 167 h ago: kept
    const plan = await table.vacuum({ dryRun: true });
    expect(plan.filesToDelete.map((f) => f.key)).not.toContain(v1Files[0]);
    expect(plan.filesWithinRetention).toBeGreaterThan(0);
    await table.close();
  });

  it("keeps every file a protected version references", async () => {
    const { clock, table, v0Files } = await tableWithHistory();
    clock.advance(1000 * HOUR);
    const plan = await table.vacuum({ protectedVersions: [0] });
    expect(plan.filesToDelete.map((f) => f.key)).not.toContain(v0Files[0]);
    expect(plan.filesProtected).toBe(1);
    expect(byId(await table.scan({ version: 0 }))).toEqual([{ id: 1, value: "v0" }]);
    await table.close();
  });

  it("refuses a retention shorter than the table's unless overridden", async () => {
    const { table } = await tableWithHistory();
    await expect(table.vacuum({ retentionHours: 1 })).rejects.toBeInstanceOf(RetentionTooShortError);
    const plan = await table.vacuum({ retentionHours: 0, allowShortRetention: true, dryRun: true });
    expect(plan.retentionMs).toBe(0);
    await table.close();
  });

  it("takes the retention from delta.deletedFileRetentionDuration", async () => {
    const clock = new ManualClock();
    const table = await DeltaTable.create(
      new MemoryObjectStore(clock.read),
      {
        schema,
        rows: { rows: [{ id: 1 }] },
        properties: { "delta.deletedFileRetentionDuration": "interval 2 hours" },
      },
      { clock: clock.read, duck },
    );
    await table.delete();
    clock.advance(3 * HOUR);
    const plan = await table.vacuum({ dryRun: true });
    expect(plan.retentionMs).toBe(2 * HOUR);
    expect(plan.filesToDelete).toHaveLength(1);
    await table.close();
  });
});

async function cdcKeys(store: MemoryObjectStore): Promise<string[]> {
  return (await listAllKeys(store, "_change_data/")).map((o) => o.key);
}
