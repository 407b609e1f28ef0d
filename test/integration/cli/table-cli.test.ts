import { cp, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../../shared/cli/main.ts";
import { DeltaTable, type StructType } from "../../../shared/delta/index.ts";
import { LocalObjectStore } from "../../../shared/object-store/local-object-store.ts";
import { testAws, testObjectStore, uniquePrefix } from "../../support/aws.ts";

const CONFORMANCE = path.resolve(import.meta.dirname, "../../../../shared/conformance/delta");

const schema: StructType = {
  type: "struct",
  fields: [
    { name: "id", type: "long", nullable: false, metadata: {} },
    { name: "name", type: "string", nullable: true, metadata: {} },
  ],
};

/** Runs `ebb` in process and captures what it prints. */
async function ebb(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await runCli(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

const jsonLines = (text: string) =>
  text
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);

/** v0 create with ids 1..3, v1 append 4, v2 delete id 2 (change data feed on). */
async function buildTable(table: DeltaTable): Promise<void> {
  await table.append({ rows: [{ id: 4, name: "d" }] });
  await table.delete("id = 2");
}

async function createTable(store: LocalObjectStore | ReturnType<typeof testObjectStore>) {
  return DeltaTable.create(store, {
    schema,
    properties: { "delta.enableChangeDataFeed": "true" },
    rows: {
      rows: [
        { id: 1, name: "a" },
        { id: 2, name: "b" },
        { id: 3, name: "c" },
      ],
    },
  });
}

describe("ebb table (local folder)", () => {
  let folder: string;

  beforeAll(async () => {
    folder = await mkdtemp(path.join(tmpdir(), "ebb-cli-"));
    const table = await createTable(new LocalObjectStore(folder));
    try {
      await buildTable(table);
    } finally {
      await table.close();
    }
  });
  afterAll(() => rm(folder, { recursive: true, force: true }));

  it("scans the latest version as an aligned table", async () => {
    const { code, out } = await ebb("table", "scan", folder);
    expect(code).toBe(0);
    const lines = out.trim().split("\n");
    expect(lines[0]).toMatch(/^id\s+name$/);
    expect(lines[1]).toMatch(/^-+\s+-+$/);
    expect(
      lines
        .slice(2)
        .map((l) => l.split(/\s+/)[0])
        .sort(),
    ).toEqual(["1", "3", "4"]);
  });

  it("scans as of a version, with --json and --limit", async () => {
    const all = await ebb("table", "scan", folder, "--version", "0", "--json");
    expect(
      jsonLines(all.out)
        .map((r) => r["id"])
        .sort(),
    ).toEqual([1, 2, 3]);
    const limited = await ebb("table", "scan", folder, "--version", "1", "--json", "--limit", "2");
    expect(jsonLines(limited.out)).toHaveLength(2);
  });

  it("scans --json with every digit: exact decimals, microsecond timestamps, dates as dates, maps as objects", async () => {
    const valuesFolder = path.join(folder, "values");
    const field = (name: string, type: StructType["fields"][number]["type"]) => ({
      name,
      type,
      nullable: true,
      metadata: {},
    });
    const table = await DeltaTable.create(new LocalObjectStore(valuesFolder), {
      schema: {
        type: "struct",
        fields: [
          field("amount", { type: "decimal", precision: 18, scale: 3 }),
          field("nines", { type: "decimal", precision: 38, scale: 0 }),
          field("wide", { type: "decimal", precision: 38, scale: 6 }),
          field("at", "timestamp"),
          field("wall", "timestamp_ntz"),
          field("day", "date"),
          field("attrs", { type: "map", keyType: "string", valueType: "long", valueContainsNull: true }),
        ],
      },
      rows: {
        sql:
          "SELECT 123456789012345.678::DECIMAL(18,3) AS amount, " +
          "'99999999999999999999999999999999999999'::DECIMAL(38,0) AS nines, " +
          "'12345678901234567890123456789012.123456'::DECIMAL(38,6) AS wide, " +
          "'2026-03-04 05:06:07.123456+00'::TIMESTAMPTZ AS at, '2026-03-04 05:06:07.000001'::TIMESTAMP AS wall, " +
          "'2026-03-04'::DATE AS day, MAP {'a': 1, 'b': 2} AS attrs",
      },
    });
    await table.close();
    const { code, out, err } = await ebb("table", "scan", valuesFolder, "--json");
    expect(code, err).toBe(0);
    expect(jsonLines(out)).toEqual([
      {
        amount: "123456789012345.678",
        nines: "99999999999999999999999999999999999999",
        wide: "12345678901234567890123456789012.123456",
        at: "2026-03-04T05:06:07.123456Z",
        wall: "2026-03-04T05:06:07.000001Z",
        day: "2026-03-04",
        attrs: { a: 1, b: 2 },
      },
    ]);
    const text = await ebb("table", "scan", valuesFolder);
    expect(text.out).toContain("123456789012345.678");
    expect(text.out).toContain("2026-03-04T05:06:07.123456Z");
  });

  it("prints history newest first", async () => {
    const { code, out } = await ebb("table", "history", folder, "--json");
    expect(code).toBe(0);
    expect(jsonLines(out).map((r) => [r["version"], r["operation"]])).toEqual([
      [2, "DELETE"],
      [1, "WRITE"],
      [0, "WRITE"],
    ]);
  });

  it("prints history as a table that fits the width, its parameters and metrics cut to fit", async () => {
    const { code, out } = await ebb("--width", "72", "table", "history", folder);
    expect(code).toBe(0);
    const lines = out.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^version\s+timestamp\s+operation\s+parameters\s+metrics$/);
    expect(lines.every((line) => line.length <= 72)).toBe(true);
    expect(lines.slice(2).map((line) => line.split(/\s+/).slice(0, 3))).toEqual([
      ["2", expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/), "DELETE"],
      ["1", expect.any(String), "WRITE"],
      ["0", expect.any(String), "WRITE"],
    ]);
    expect(lines[2]).toMatch(/…/);
  });

  it("prints the change data feed", async () => {
    const { out } = await ebb("table", "changes", folder, "--from", "1", "--json");
    const changes = jsonLines(out).map((r) => [r["_change_type"], r["id"], r["_commit_version"]]);
    expect(changes).toEqual(
      expect.arrayContaining([
        ["insert", 4, 1],
        ["delete", 2, 2],
      ]),
    );
    expect(changes).toHaveLength(2);
  });

  it("reads a past version alone: one whose table has since taken a reader feature Ebb lacks still reads", async () => {
    // As Spark's and delta-rs's time travel: the version asked for is loaded, never the latest first.
    const copy = await mkdtemp(path.join(tmpdir(), "ebb-cli-travel-"));
    try {
      await cp(folder, copy, { recursive: true });
      const upgrade = {
        protocol: {
          minReaderVersion: 3,
          minWriterVersion: 7,
          readerFeatures: ["deletionVectors"],
          writerFeatures: ["deletionVectors"],
        },
      };
      await writeFile(
        path.join(copy, "_delta_log", "00000000000000000003.json"),
        `${JSON.stringify({ commitInfo: { timestamp: Date.now(), operation: "UPGRADE" } })}\n${JSON.stringify(upgrade)}\n`,
      );
      const past = await ebb("table", "scan", copy, "--version", "1", "--json");
      expect(past.err).toBe("");
      expect(
        jsonLines(past.out)
          .map((r) => r["id"])
          .sort(),
      ).toEqual([1, 2, 3, 4]);
      const latest = await ebb("table", "scan", copy);
      expect(latest.code).toBe(1);
      expect(latest.err).toMatch(/deletionVectors/);
    } finally {
      await rm(copy, { recursive: true, force: true });
    }
  });

  it("refuses a version outside history on stderr with exit code 1", async () => {
    const { code, out, err } = await ebb("table", "scan", folder, "--version", "9");
    expect(code).toBe(1);
    expect(out).toBe("");
    expect(err).toMatch(/version 9 is not in the table's history/);
  });

  it("refuses bad usage with exit code 2", async () => {
    expect((await ebb("table", "scan", folder, "--version", "x")).code).toBe(2);
    expect(
      (await ebb("table", "scan", folder, "--version", "0", "--timestamp", "2024-01-01 00:00:00")).code,
    ).toBe(2);
    expect((await ebb("table", "restore", folder)).code).toBe(2);
    const badTime = await ebb("table", "scan", folder, "--timestamp", "yesterday");
    expect(badTime.code).toBe(2);
    expect(badTime.err).toMatch(/not a timestamp/);
  });

  it("names the folder when there is no table", async () => {
    const missing = path.join(folder, "nope");
    const { code, err } = await ebb("table", "scan", missing);
    expect(code).toBe(1);
    expect(err).toContain(`no Delta table at ${missing}`);
  });

  it("vacuums: a dry run lists, a short retention needs the override", async () => {
    const refused = await ebb("table", "vacuum", folder, "--retain-hours", "0", "--dry-run");
    expect(refused.code).toBe(1);
    const dry = await ebb(
      "table",
      "vacuum",
      folder,
      "--retain-hours",
      "0",
      "--allow-short-retention",
      "--dry-run",
      "--json",
    );
    expect(dry.code).toBe(0);
    // The DELETE rewrote the file holding id 2: the original file is no longer referenced.
    expect(jsonLines(dry.out).length).toBeGreaterThan(0);
    expect(jsonLines(dry.out).every((r) => r["status"] === "would delete")).toBe(true);
  });

  it("restores to version 0 in one commit", async () => {
    const { code, out } = await ebb("table", "restore", folder, "--version", "0", "--json");
    expect(code).toBe(0);
    expect(jsonLines(out)[0]).toMatchObject({ version: 3 });
    const scan = await ebb("table", "scan", folder, "--json");
    expect(
      jsonLines(scan.out)
        .map((r) => r["id"])
        .sort(),
    ).toEqual([1, 2, 3]);
  });

  it("refuses to restore a table whose properties it cannot honour, before writing the RESTORE commit", async () => {
    // Spark's table with delta.checkpoint.writeStatsAsStruct=true (versions 0..3), as append refuses it.
    const spark = path.join(folder, "stats-as-struct");
    await cp(path.join(CONFORMANCE, "dat-v0.0.2/stats_as_struct/delta"), spark, { recursive: true });
    const { code, err } = await ebb("table", "restore", spark, "--version", "1");
    expect(code).toBe(1);
    expect(err).toContain("delta.checkpoint.writeStatsAsStruct");
    expect(await readdir(path.join(spark, "_delta_log"))).not.toContain("00000000000000000004.json");
  });

  it("optimizes: a dry run lists the bin, the run compacts it, the rows stay", async () => {
    await ebb("table", "restore", folder, "--version", "2"); // v4: the files of ids 1, 3 and 4
    const dry = await ebb("table", "optimize", folder, "--dry-run", "--json");
    expect(dry.code, dry.err).toBe(0);
    expect(jsonLines(dry.out)).toEqual([expect.objectContaining({ files: 2, status: "would compact" })]);
    const done = await ebb("table", "optimize", folder, "--json");
    expect(jsonLines(done.out)).toEqual([
      expect.objectContaining({ files: 2, status: "compacted in version 5" }),
    ]);
    const history = await ebb("table", "history", folder, "--limit", "1", "--json");
    expect(jsonLines(history.out)[0]).toMatchObject({ version: 5, operation: "OPTIMIZE" });
    const again = await ebb("table", "optimize", folder, "--json");
    expect(again.out.trim()).toBe("");
  });
});

describe("ebb table (s3:// on the embedded S3)", () => {
  it("reads a table through the AWS SDK, honouring AWS_ENDPOINT_URL_S3", async () => {
    const prefix = uniquePrefix("cli");
    const table = await createTable(testObjectStore(prefix));
    await table.close();
    const { endpoints, storage } = testAws();
    const saved = { ...process.env };
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_S3: endpoints.s3Endpoint,
      AWS_REGION: endpoints.region,
      AWS_ACCESS_KEY_ID: endpoints.credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: endpoints.credentials.secretAccessKey,
    });
    try {
      const { code, out, err } = await ebb("table", "scan", `s3://${storage.bucket}/${prefix}`, "--json");
      expect(err).toBe("");
      expect(code).toBe(0);
      expect(
        jsonLines(out)
          .map((r) => r["id"])
          .sort(),
      ).toEqual([1, 2, 3]);
    } finally {
      process.env = saved;
    }
  });
});
