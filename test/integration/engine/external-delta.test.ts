import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DeltaTable, type StructType } from "../../../shared/delta/index.ts";
import {
  UpstreamChangedError,
  UpstreamRefreshedError,
  UpstreamRewoundError,
} from "../../../shared/engine/errors.ts";
import { listAllKeys } from "../../../shared/object-store/object-store.ts";
import { EngineHarness, locate } from "./engine-harness.ts";

const schema: StructType = {
  type: "struct",
  fields: [
    { name: "id", type: "long", nullable: true, metadata: {} },
    { name: "name", type: "string", nullable: true, metadata: {} },
  ],
};
const rows = (...ids: number[]) => ({ rows: ids.map((id) => ({ id: BigInt(id), name: `n${id}` })) });

/** A pipeline mirroring a Delta table Ebb does not own, through appends, rewinds, deletes and a re-creation. */
describe("a pipeline reading an external Delta table", () => {
  // One harness (one pipeline id, so one set of checkpoints) per test.
  let harness: EngineHarness;
  beforeEach(() => {
    harness = new EngineHarness();
  });
  afterEach(() => harness.close());

  const mirrorOf = (path: string) =>
    harness.validate({
      name: "mirror",
      catalog: "main",
      schema: "ext",
      datasets: [
        {
          type: "streaming_table",
          name: "mirror",
          flows: [{ name: "copy", source: { type: "delta", path }, sql: "SELECT id, name FROM source" }],
        },
      ],
    });
  const ids = async (pipeline: Awaited<ReturnType<typeof mirrorOf>>) =>
    (await harness.rows(pipeline, "mirror")).map((r) => Number(r["id"])).sort((a, b) => a - b);

  it("reads appends incrementally and skips the versions a RESTORE abandoned", async () => {
    const path = `${harness.landingUri}orders/`;
    const external = await DeltaTable.create(locate(path), { schema, rows: rows(1, 2, 3) });
    const pipeline = await mirrorOf(path);
    expect((await harness.run(pipeline)).state).toBe("COMPLETED");
    expect(await ids(pipeline)).toEqual([1, 2, 3]);

    await external.append(rows(4, 5)); // v1
    const second = await harness.run(pipeline);
    expect(second.flows["copy"]).toMatchObject({ batches: 1, rowsIn: 2 });
    expect(await ids(pipeline)).toEqual([1, 2, 3, 4, 5]);

    // v2 appends 6 (never read), v3 restores v1, v4 appends 7: the reader is at v1, so it skips 2..3.
    await external.append(rows(6));
    await external.restore({ to: { version: 1 } });
    await external.append(rows(7));
    const third = await harness.run(pipeline);
    expect(third.state).toBe("COMPLETED");
    expect(await ids(pipeline)).toEqual([1, 2, 3, 4, 5, 7]);
    const warnings = await harness.plane.events.query(
      harness.pipelineId,
      { eventType: "warning", updateId: third.updateId },
      { limit: 10 },
    );
    expect(warnings.items.map((e) => e.message)).toEqual([
      "Flow 'copy' skipped versions 2 to 3 of its upstream: a rewind (RESTORE at version 3) abandoned them",
    ]);

    // The reader has read v5; a rewind of the source to v4 leaves it past the restored version.
    await external.append(rows(8)); // v5
    await harness.run(pipeline);
    await external.restore({ to: { version: 4 } }); // v6
    const fourth = await harness.run(pipeline);
    expect(fourth.state).toBe("FAILED");
    expect(fourth.error).toBeInstanceOf(UpstreamRewoundError);
    expect((fourth.error as Error).message).toMatch(
      /version 6 restored version 4.*rewind this flow's dataset too/,
    );
    await external.close();
  });

  it("fails on a DELETE upstream, and on a table dropped and recreated, saying to refresh", async () => {
    const path = `${harness.landingUri}customers/`;
    const external = await DeltaTable.create(locate(path), { schema, rows: rows(1, 2) });
    const pipeline = await harness.validate({
      name: "mirror2",
      catalog: "main",
      schema: "ext2",
      datasets: [
        {
          type: "streaming_table",
          name: "mirror",
          flows: [{ name: "copy", source: { type: "delta", path }, sql: "SELECT * FROM source" }],
        },
      ],
    });
    expect((await harness.run(pipeline)).state).toBe("COMPLETED");
    await external.delete("id = 1");
    const afterDelete = await harness.run(pipeline);
    expect(afterDelete.error).toBeInstanceOf(UpstreamChangedError);
    expect((afterDelete.error as Error).message).toMatch(/version 1 .* is a DELETE .* fully refresh/);
    await external.close();

    const store = locate(path);
    await store.deleteMany((await listAllKeys(store, "")).map((o) => o.key));
    await (await DeltaTable.create(store, { schema, rows: rows(9) })).close();
    const afterDrop = await harness.run(pipeline);
    expect(afterDrop.error).toBeInstanceOf(UpstreamRefreshedError);
    expect((afterDrop.error as Error).message).toMatch(
      /was fully refreshed \(DROP: the table was recreated\).*refresh this flow's dataset too/,
    );
  });
});
