/**
 * Every writer takes the one commit path (commit/transaction.ts): the streaming sink, the rewind's
 * RESTORE and the TRUNCATE reset get what follows a commit (a checkpoint at the interval, expired-log
 * cleanup) and the writable check, as `DeltaTable` always did.
 */
import { describe, expect, it } from "vitest";
import {
  DeltaTable,
  executeRestore,
  loadSnapshot,
  planRestore,
  UnsupportedFeatureError,
  VersionNotFoundError,
} from "../../../shared/delta/index.ts";
import { commit } from "../../../shared/delta/commit/commit.ts";
import { LAST_CHECKPOINT_KEY } from "../../../shared/delta/log/log-paths.ts";
import type { DuckSession } from "../../../shared/duck/duck-session.ts";
import type { ScratchFolder } from "../../../shared/duck/scratch-folder.ts";
import { appendBatch, type SinkSession } from "../../../shared/engine/table-sink.ts";
import { resetTable } from "../../../shared/rewind/dataset-reset.ts";
import { MemoryObjectStore } from "../../../shared/object-store/memory-object-store.ts";
import { field, ManualClock, schemaOf } from "./delta-test-kit.ts";
import { openDuckAndScratch } from "../../support/duck-and-scratch.ts";

const HOUR = 3_600_000;
const schema = schemaOf(field("id", "long"));
const properties = { "delta.checkpointInterval": "2", "delta.logRetentionDuration": "interval 1 hour" };

async function lastCheckpointVersion(store: MemoryObjectStore): Promise<number | undefined> {
  if (!(await store.head(LAST_CHECKPOINT_KEY))) return undefined;
  return (JSON.parse(new TextDecoder().decode(await store.get(LAST_CHECKPOINT_KEY))) as { version: number })
    .version;
}

/** A table at version 1 (two rows, one per version) checkpointing every 2 versions. */
async function twoVersionTable(
  store: MemoryObjectStore,
  clock: ManualClock,
  duck: DuckSession,
): Promise<void> {
  const table = await DeltaTable.create(
    store,
    { schema, properties, rows: { rows: [{ id: 0 }] } },
    { clock: clock.read, duck },
  );
  await table.append({ rows: [{ id: 1 }] });
  await table.close();
}

/** Adds a CHECK constraint to the table's metadata (a feature this writer refuses to write under). */
async function addCheckConstraint(store: MemoryObjectStore, clock: ManualClock): Promise<void> {
  const snapshot = await loadSnapshot(store);
  const metaData = {
    ...snapshot.metadata,
    configuration: { ...snapshot.metadata.configuration, "delta.constraints.positive": "id > 0" },
  };
  const result = await commit(
    store,
    {
      readSnapshot: snapshot,
      // CHECK constraints need their feature on a writer-7 table (PROTOCOL.md "Table Features").
      actions: [
        {
          protocol: {
            ...snapshot.protocol,
            writerFeatures: [...(snapshot.protocol.writerFeatures ?? []), "checkConstraints"].sort(),
          },
        },
        { metaData },
      ],
      operation: { operation: "ADD CONSTRAINT", operationParameters: {}, isBlindAppend: false },
      requirements: [],
    },
    { clock: clock.read },
  );
  expect(result.status).toBe("committed");
}

describe("the one commit path", () => {
  let duck: DuckSession;
  let scratch: ScratchFolder;
  openDuckAndScratch((opened) => ({ duck, scratch } = opened));

  it("gives the streaming sink checkpoints at the interval and expired-log cleanup", async () => {
    const clock = new ManualClock();
    const store = new MemoryObjectStore(clock.read);
    const created = await DeltaTable.create(store, { schema, properties }, { clock: clock.read, duck });
    await created.close();
    const session: SinkSession = { duck, scratch, clock: clock.read };
    const target = { store, name: "events" };
    const batch = (seq: number) =>
      appendBatch(target, session, `SELECT ${seq}::BIGINT AS id`, { appId: "p/f", version: seq });

    await batch(1);
    expect(await lastCheckpointVersion(store)).toBeUndefined();
    await batch(2); // version 2: checkpoint, nothing old enough to clean up
    expect(await lastCheckpointVersion(store)).toBe(2);
    clock.advance(2 * HOUR);
    await batch(3);
    expect(await batch(4)).toMatchObject({ version: 4, alreadyCommitted: false }); // checkpoint, cleanup
    expect(await lastCheckpointVersion(store)).toBe(4);
    await expect(loadSnapshot(store, { version: 1 })).rejects.toBeInstanceOf(VersionNotFoundError);
    expect((await loadSnapshot(store)).files.size).toBe(4);
    expect(await batch(4)).toMatchObject({ version: 4, alreadyCommitted: true });
  });

  it("checkpoints a RESTORE at the interval, and refuses one on a table it cannot write", async () => {
    const clock = new ManualClock();
    const store = new MemoryObjectStore(clock.read);
    await twoVersionTable(store, clock, duck);
    const current = await loadSnapshot(store);
    const plan = planRestore(current, await loadSnapshot(store, { version: 0 }), clock.read());
    const committed = await executeRestore(store, current, plan, { clock: clock.read });
    expect(committed).toMatchObject({ status: "committed", version: 2, checkpoint: { version: 2 } });
    expect(await lastCheckpointVersion(store)).toBe(2);

    const guarded = new MemoryObjectStore(clock.read);
    await twoVersionTable(guarded, clock, duck);
    await addCheckConstraint(guarded, clock);
    const latest = await loadSnapshot(guarded);
    const refused = planRestore(latest, await loadSnapshot(guarded, { version: 0 }), clock.read());
    await expect(executeRestore(guarded, latest, refused, { clock: clock.read })).rejects.toBeInstanceOf(
      UnsupportedFeatureError,
    );
    expect((await loadSnapshot(guarded)).version).toBe(2);
  });

  it("checkpoints a TRUNCATE reset at the interval, and refuses one on a table it cannot write", async () => {
    const clock = new ManualClock();
    const store = new MemoryObjectStore(clock.read);
    await twoVersionTable(store, clock, duck);
    expect(await resetTable(store, { how: "TRUNCATE" }, clock.read)).toEqual({ version: 2 });
    expect(await lastCheckpointVersion(store)).toBe(2);
    expect((await loadSnapshot(store)).files.size).toBe(0);

    const guarded = new MemoryObjectStore(clock.read);
    await twoVersionTable(guarded, clock, duck);
    await addCheckConstraint(guarded, clock);
    await expect(resetTable(guarded, { how: "TRUNCATE" }, clock.read)).rejects.toBeInstanceOf(
      UnsupportedFeatureError,
    );
    expect((await loadSnapshot(guarded)).files.size).toBe(2);
  });
});
