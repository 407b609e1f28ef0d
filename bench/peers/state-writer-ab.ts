import { performance } from "node:perf_hooks";
import { Sandbox } from "../../shared/engine/sandbox.ts";
import { openStateVersion, type StateSchema } from "../../shared/state/index.ts";
import { MemoryObjectStore } from "../../shared/object-store/memory-object-store.ts";

const schema: StateSchema = { key: [{ name: "id", type: "BIGINT" }], value: [{ name: "n", type: "BIGINT" }] };
const flow = { pipelineId: "p", flowId: "f" };
const sandbox = await Sandbox.open();
const keys = Number(process.argv[2] ?? "1000000");
const touched = Number(process.argv[3] ?? "10000");
const store = new MemoryObjectStore();
let v = await openStateVersion({ store, flow });
{
  const w = v.writer();
  const t = v.table("s", schema);
  w.insert(t, `SELECT range::BIGINT AS id, range::BIGINT AS n FROM range(${keys})`);
  v = await openStateVersion({ store, flow, version: (await w.commit(sandbox, 1)).version! });
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const times: Record<string, number[]> = { lookup: [], read: [] };
let seq = 2;
for (let round = 0; round < 5; round++)
  for (const mode of ["lookup", "read"] as const) {
    const t = v.table("s", schema);
    // As AUTO CDC does: the touched keys' rows loaded first (both modes), then the write.
    await t.loadKeys(sandbox, `SELECT range::BIGINT AS id FROM range(${touched})`, "__prior");
    const start = performance.now();
    const w = v.writer();
    w.upsert(t, `SELECT range::BIGINT AS id, (range + ${seq})::BIGINT AS n FROM range(${touched})`);
    if (mode === "read") w.liveKeysRead(t, "SELECT id FROM __prior");
    await w.commit(sandbox, seq++);
    times[mode]!.push(performance.now() - start);
  }
console.log(
  `${keys} keys, ${touched} upserted: write with lookup ${median(times.lookup!).toFixed(0)} ms, with the keys read ${median(times.read!).toFixed(0)} ms (medians of 5, interleaved)`,
  times,
);
await sandbox.close();
