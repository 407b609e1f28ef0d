import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeltaTable, loadSnapshot, UnsupportedTablePropertyError } from "../../../shared/delta/index.ts";
import { InvalidTablePropertyError } from "../../../shared/delta/errors.ts";
import { DuckSession } from "../../../shared/duck/duck-session.ts";
import { MemoryObjectStore } from "../../../shared/object-store/memory-object-store.ts";
import { field, schemaOf } from "./delta-test-kit.ts";

/**
 * Properties that switch on a Delta feature or ask for a protocol: each is refused by name at
 * create, or applied to the protocol (as Spark does) instead of stored as if it held.
 */

const schema = schemaOf(field("id", "long", false), field("v", "string"));

describe("feature-enabling table properties", () => {
  let duck: DuckSession;
  beforeAll(async () => {
    duck = await DuckSession.open();
  });
  afterAll(() => duck.close());

  const ICT = { "delta.enableInCommitTimestamps": "true" };
  const ICT_OFF = { "delta.enableInCommitTimestamps": "false" };
  const ICT_PROTOCOL = {
    minReaderVersion: 1,
    minWriterVersion: 7,
    writerFeatures: ["inCommitTimestamp", "invariants"],
  };
  const create = (properties: Record<string, string>, store = new MemoryObjectStore()) =>
    DeltaTable.create(store, { schema, properties }, { duck }).then(async (table) => {
      await table.close();
      return loadSnapshot(store);
    });

  it.each([
    ["delta.enableDeletionVectors", "true", "deletionVectors"],
    ["delta.enableRowTracking", "true", "rowTracking"],
    ["delta.enableTypeWidening", "true", "typeWidening"],
    ["delta.columnMapping.mode", "name", "columnMapping"],
    ["delta.columnMapping.mode", "id", "columnMapping"],
    ["delta.constraints.positive", "id > 0", "checkConstraints"],
    ["delta.feature.deletionVectors", "supported", "deletionVectors"],
    ["delta.feature.v2Checkpoint", "supported", "v2Checkpoint"],
    ["delta.minReaderVersion", "2", "columnMapping"],
    ["delta.minWriterVersion", "5", "columnMapping"],
    ["delta.minWriterVersion", "6", "identityColumns"],
  ])("refuses %s=%s at create, naming %s, and writes nothing", async (key, value, feature) => {
    const store = new MemoryObjectStore();
    const refused = create({ [key]: value }, store);
    await expect(refused).rejects.toBeInstanceOf(UnsupportedTablePropertyError);
    await expect(refused).rejects.toMatchObject({ errorCode: "UNSUPPORTED_TABLE_PROPERTY", key, feature });
    await expect(refused).rejects.toThrow(new RegExp(`${key.replaceAll(".", "\\.")}.*${feature}`));
    expect((await store.list("")).objects).toEqual([]);
  });

  it.each([
    ["delta.enableDeletionVectors", "false"],
    ["delta.enableRowTracking", "false"],
    ["delta.columnMapping.mode", "none"],
  ])("accepts %s=%s, the feature left off, with in-commit timestamps only", async (key, value) => {
    const snapshot = await create({ [key]: value });
    expect(snapshot.protocol).toEqual(ICT_PROTOCOL);
    expect(snapshot.metadata.configuration).toEqual({ [key]: value, ...ICT });
  });

  it("records in-commit timestamps unless delta.enableInCommitTimestamps=false, which keeps the legacy protocol", async () => {
    const store = new MemoryObjectStore();
    expect((await create({}, store)).commitInfo?.inCommitTimestamp).toEqual(expect.any(Number));
    const off = await create({ "delta.enableInCommitTimestamps": "false" });
    expect(off.protocol).toEqual({ minReaderVersion: 1, minWriterVersion: 2 });
    expect(off.commitInfo?.inCommitTimestamp).toBeUndefined();
  });

  it.each([
    ["delta.minReaderVersion", "x"],
    ["delta.minWriterVersion", "8"],
    ["delta.feature.appendOnly", "on"],
  ])("refuses %s=%s as an invalid value", async (key, value) => {
    await expect(create({ [key]: value })).rejects.toBeInstanceOf(InvalidTablePropertyError);
  });

  it("applies delta.feature.* to the protocol's feature lists, not to the configuration", async () => {
    const snapshot = await create({
      "delta.feature.appendOnly": "supported",
      "delta.feature.timestampNtz": "supported",
      "delta.enableChangeDataFeed": "true",
    });
    expect(snapshot.protocol).toEqual({
      minReaderVersion: 3,
      minWriterVersion: 7,
      readerFeatures: ["timestampNtz"],
      writerFeatures: ["appendOnly", "changeDataFeed", "inCommitTimestamp", "invariants", "timestampNtz"],
    });
    expect(snapshot.metadata.configuration).toEqual({ "delta.enableChangeDataFeed": "true", ...ICT });
  });

  it("a writer-only delta.feature.* gives writer 7 with reader 1", async () => {
    const snapshot = await create({ "delta.feature.changeDataFeed": "supported" });
    expect(snapshot.protocol).toEqual({
      minReaderVersion: 1,
      minWriterVersion: 7,
      writerFeatures: ["changeDataFeed", "inCommitTimestamp", "invariants"],
    });
  });

  it.each([
    [
      { ...ICT_OFF, "delta.minWriterVersion": "3" },
      { minReaderVersion: 1, minWriterVersion: 3 },
    ],
    [
      { ...ICT_OFF, "delta.minWriterVersion": "1", "delta.enableChangeDataFeed": "true" },
      { minReaderVersion: 1, minWriterVersion: 4 },
    ],
    [
      { ...ICT_OFF, "delta.minWriterVersion": "7" },
      { minReaderVersion: 1, minWriterVersion: 7, writerFeatures: ["invariants"] },
    ],
    [
      { "delta.minReaderVersion": "3", "delta.appendOnly": "true" },
      {
        minReaderVersion: 3,
        minWriterVersion: 7,
        readerFeatures: [],
        writerFeatures: ["appendOnly", "inCommitTimestamp", "invariants"],
      },
    ],
  ])("raises the protocol to delta.min*Version %j and does not store it", async (properties, protocol) => {
    const snapshot = await create(properties);
    expect(snapshot.protocol).toEqual(protocol);
    for (const key of Object.keys(snapshot.metadata.configuration)) expect(key).not.toMatch(/^delta\.min/);
  });
});
