import fc from "fast-check";
import { mkdir, mkdtemp, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeltaTable, isVacuumable, snapshotTombstones, type StructType } from "../../shared/delta/index.ts";
import { DuckSession } from "../../shared/duck/duck-session.ts";
import { LocalObjectStore } from "../../shared/object-store/local-object-store.ts";
import { listAllKeys, type ObjectStore } from "../../shared/object-store/object-store.ts";
import { withPrefix } from "../../shared/object-store/prefixed-object-store.ts";

/**
 * VACUUM on a local bucket lists the table's keys without a `stat` each and `head`s only the
 * unreferenced files the log says too little of. Random tables (appends, deletes and overwrites at
 * random times, partitioned, under a prefix of the bucket) with random stray files (orphans, change
 * data, hidden files, a dead job's scratch, extra log files) of random ages, vacuumed at a random
 * retention with random protected versions: what it deletes and counts is what the reference model
 * gives, the rule applied to every object's full listing (`list`, each with its metadata).
 */

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 0, 1);

const schema: StructType = {
  type: "struct",
  fields: [
    { name: "id", type: "long", nullable: false, metadata: {} },
    { name: "p", type: "integer", nullable: false, metadata: {} },
  ],
};

type Step =
  | { readonly kind: "append"; readonly ids: readonly number[] }
  | { readonly kind: "delete"; readonly below: number }
  | { readonly kind: "overwrite"; readonly ids: readonly number[] };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant("append" as const),
    ids: fc.array(fc.nat(40), { minLength: 1, maxLength: 6 }),
  }),
  fc.record({ kind: fc.constant("delete" as const), below: fc.nat(40) }),
  fc.record({
    kind: fc.constant("overwrite" as const),
    ids: fc.array(fc.nat(40), { minLength: 1, maxLength: 4 }),
  }),
);

const STRAY_FOLDERS = [
  "",
  "p=1/",
  "p=7/",
  "_change_data/",
  "_delta_log/",
  "_tmp/",
  ".hidden/",
  "job/_temporary/0/",
];
const stray = fc.record({
  folder: fc.constantFrom(...STRAY_FOLDERS),
  name: fc.constantFrom("orphan.parquet", ".orphan.parquet.crc", "x.parquet"),
  ageHours: fc.nat(400),
  size: fc.nat(50),
});

const scenario = fc.record({
  steps: fc.array(fc.record({ step, hoursLater: fc.nat(100) }), { minLength: 1, maxLength: 5 }),
  strays: fc.array(stray, { maxLength: 6 }),
  retentionHours: fc.nat(300),
  protectedPicks: fc.array(fc.nat(), { maxLength: 2 }),
});

/** The reference: VACUUM's rule over the full listing, each object with its metadata. */
async function modelPlan(
  table: DeltaTable,
  store: ObjectStore,
  protectedVersions: readonly number[],
  cutoff: number,
) {
  const latest = await table.refresh();
  const tombstones = await snapshotTombstones(latest);
  const protectedKeys = new Set<string>();
  for (const version of protectedVersions)
    for (const key of (await table.snapshotAt({ version })).files.keys()) protectedKeys.add(key);
  const deleted: { key: string; size: number }[] = [];
  let within = 0;
  let kept = 0;
  for (const object of await listAllKeys(store, "")) {
    if (!isVacuumable(object.key) || latest.files.has(object.key)) continue;
    if (protectedKeys.has(object.key)) kept += 1;
    else if ((tombstones.get(object.key)?.deletionTimestamp ?? object.lastModified) < cutoff)
      deleted.push({ key: object.key, size: object.size });
    else within += 1;
  }
  return { deleted: deleted.sort((a, b) => a.key.localeCompare(b.key)), within, kept };
}

describe("VACUUM over a keys-only listing", () => {
  let duck: DuckSession;
  let dir: string;
  beforeAll(async () => {
    duck = await DuckSession.open();
    dir = await mkdtemp(path.join(tmpdir(), "ebb-vacuum-listing-"));
  });
  afterAll(async () => {
    duck.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("deletes and counts what the rule over the full listing gives", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(scenario, async ({ steps, strays, retentionHours, protectedPicks }) => {
        const bucket = path.join(dir, `bucket-${run++}`);
        const store = withPrefix(new LocalObjectStore(bucket), "tables/t/");
        let now = T0;
        const clock = () => now;
        const table = await DeltaTable.create(
          store,
          {
            schema,
            partitionColumns: ["p"],
            rows: { rows: [{ id: 0, p: 0 }] },
            properties: { "delta.enableChangeDataFeed": "true" },
          },
          { duck, clock },
        );
        try {
          for (const { step: s, hoursLater } of steps) {
            now += hoursLater * HOUR;
            const rows = (ids: readonly number[]) => ({ rows: ids.map((id) => ({ id, p: id % 8 })) });
            if (s.kind === "append") await table.append(rows(s.ids));
            else if (s.kind === "overwrite") await table.overwrite(rows(s.ids));
            else await table.delete(`id < ${s.below}`);
          }
          now += HOUR;
          for (const [i, s] of strays.entries()) {
            const file = path.join(
              bucket,
              "tables",
              "t",
              ...s.folder.split("/").filter(Boolean),
              `${i}-${s.name}`,
            );
            await mkdir(path.dirname(file), { recursive: true });
            await writeFile(file, "x".repeat(s.size));
            const mtime = new Date(now - s.ageHours * HOUR);
            await utimes(file, mtime, mtime);
          }
          const latest = await table.refresh();
          const protectedVersions = [...new Set(protectedPicks.map((pick) => pick % (latest.version + 1)))];
          const cutoff = now - retentionHours * HOUR;
          const expected = await modelPlan(table, store, protectedVersions, cutoff);

          const plan = await table.vacuum({ retentionHours, allowShortRetention: true, protectedVersions });
          expect([...plan.filesToDelete].sort((a, b) => a.key.localeCompare(b.key))).toEqual(
            expected.deleted,
          );
          expect(plan.filesWithinRetention).toBe(expected.within);
          expect(plan.filesProtected).toBe(expected.kept);
          const left = new Set((await listAllKeys(store, "")).map((o) => o.key));
          for (const { key } of expected.deleted) expect(left.has(key)).toBe(false);
          for (const key of latest.files.keys()) expect(left.has(key)).toBe(true);
        } finally {
          await table.close();
          await rm(bucket, { recursive: true, force: true });
        }
      }),
      { numRuns: 25 },
    );
  });
});
