import { mkdir, rm, stat, writeFile } from "node:fs/promises";
import { Session } from "node:inspector/promises";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { DeltaTable, forgetDecodedCheckpoints, type StructType } from "../../shared/delta/index.ts";
import { DuckSession } from "../../shared/duck/duck-session.ts";
import { LocalObjectStore } from "../../shared/object-store/local-object-store.ts";
import { copyTree } from "./copy-tree.ts";

/**
 * `tsx bench/peers/profile-ops.ts [dir] [feed|vacuum|both] [rounds]`: the peers bench's change feed of
 * 100 one-row commits and VACUUM of 1,000 removed files alone, repeated, each round's wall and CPU
 * time printed (CPU: the process's, DuckDB's threads included, which a loaded host disturbs less).
 * With `PROFILE_OUT=<file>` the rounds after the first two run under the V8 CPU profiler. The tables
 * are made once in `dir` and kept for the next run.
 */
const [dir = "/tmp/ebb-profile-ops", which = "both", roundsText = "10"] = process.argv.slice(2);
const rounds = Number(roundsText);
const schema: StructType = {
  type: "struct",
  fields: [
    { name: "id", type: "long", nullable: false, metadata: {} },
    { name: "p", type: "integer", nullable: false, metadata: {} },
    { name: "payload", type: "string", nullable: true, metadata: {} },
  ],
};
const duck = await DuckSession.open();
const log = path.join(dir, "long-log");
const vacuum = path.join(dir, "vacuum");
const exists = (p: string) =>
  stat(p).then(
    () => true,
    () => false,
  );
if (!(await exists(log))) {
  await mkdir(dir, { recursive: true });
  const t = await DeltaTable.create(
    new LocalObjectStore(log),
    { schema, properties: { "delta.checkpointInterval": "10", "delta.enableChangeDataFeed": "true" } },
    { duck },
  );
  for (let i = 1; i <= 1000; i++) await t.append({ rows: [{ id: i, p: 0, payload: `row ${i}` }] });
  await t.close();
  const v = await DeltaTable.create(
    new LocalObjectStore(vacuum),
    {
      schema,
      partitionColumns: ["p"],
      rows: {
        sql: `SELECT range AS id, CAST(range % 1000 AS INTEGER) AS p, 'x' AS payload FROM range(10000)`,
      },
    },
    { duck },
  );
  await v.delete();
  await v.close();
}
const times: Record<string, number[]> = { feed: [], vacuum: [], feedCpu: [], vacuumCpu: [] };
const cpuMs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};
const session = new Session();
session.connect();
for (let r = 0; r < rounds; r++) {
  if (r === 2 && process.env["PROFILE_OUT"]) {
    await session.post("Profiler.enable");
    await session.post("Profiler.start");
  }
  if (which !== "vacuum") {
    forgetDecodedCheckpoints();
    const cpu = process.cpuUsage();
    const start = performance.now();
    const table = await DeltaTable.open(new LocalObjectStore(log), { duck });
    const rows = await table.changes(901, 1000);
    await table.close();
    times.feed!.push(performance.now() - start);
    times.feedCpu!.push(cpuMs(cpu));
    if (rows.length !== 100) throw new Error(`feed ${rows.length}`);
  }
  if (which !== "feed") {
    const copy = `${vacuum}-copy`;
    await rm(copy, { recursive: true, force: true });
    await copyTree(vacuum, copy);
    const cpu = process.cpuUsage();
    const start = performance.now();
    const table = await DeltaTable.open(new LocalObjectStore(copy), { duck });
    const result = await table.vacuum({ retentionHours: 0, allowShortRetention: true });
    await table.close();
    times.vacuum!.push(performance.now() - start);
    times.vacuumCpu!.push(cpuMs(cpu));
    if (result.filesToDelete.length !== 1000) throw new Error(`vacuum ${result.filesToDelete.length}`);
  }
}
if (process.env["PROFILE_OUT"]) {
  const { profile } = await session.post("Profiler.stop");
  await writeFile(process.env["PROFILE_OUT"], JSON.stringify(profile));
}
for (const [k, v] of Object.entries(times))
  if (v.length)
    console.log(
      k,
      v.map((t) => t.toFixed(1)).join(" "),
      "median",
      [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!.toFixed(1),
    );
duck.close();
