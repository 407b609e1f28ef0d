import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QueryError, SandboxViolationError } from "../../../shared/engine/errors.ts";
import { Sandbox } from "../../../shared/engine/sandbox.ts";
import { MemoryObjectStore } from "../../../shared/object-store/memory-object-store.ts";
import { landFiles } from "../../../shared/engine/auto-loader-source.ts";
import { registerTableFiles } from "../../../shared/engine/snapshot-views.ts";
import { DeltaTable, currentSnapshot, dataFileKey, type StructType } from "../../../shared/delta/index.ts";
import { DuckSession } from "../../../shared/duck/duck-session.ts";
import { LocalObjectStore } from "../../../shared/object-store/local-object-store.ts";
import { EngineHarness, jsonLines } from "./engine-harness.ts";

/** User SQL reaches nothing but the batch and the snapshots the engine registered (architecture.md "Compute"). */
describe("the sandbox", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await Sandbox.open();
    await sandbox.run("CREATE TEMP TABLE source AS SELECT 1 AS id");
  });
  afterAll(() => sandbox.close());

  const refusals: [string, string, RegExp][] = [
    ["a local file", "SELECT * FROM read_csv('/etc/passwd')", /access to "\/etc\/passwd"/],
    ["a text file", "SELECT * FROM read_text('/etc/hostname')", /access to "\/etc\/hostname"/],
    [
      "an S3 URL",
      "SELECT * FROM read_parquet('s3://bucket/data.parquet')",
      /access to "s3:\/\/bucket\/data.parquet"/,
    ],
    [
      "an HTTP URL",
      "SELECT * FROM read_json('https://example.com/x.json')",
      /access to "https:\/\/example.com\/x.json"/,
    ],
    ["glob outside the folder", "SELECT * FROM glob('/etc/*')", /access to "\/etc\/\*"/],
    ["ATTACH", "ATTACH '/tmp/other.db' AS other", /an ATTACH statement is not allowed/],
    ["COPY … TO", "COPY (SELECT * FROM source) TO '/tmp/out.csv'", /a COPY statement is not allowed/],
    ["INSTALL", "INSTALL httpfs", /an INSTALL statement is not allowed/],
    ["LOAD", "LOAD httpfs", /a LOAD statement is not allowed/],
    ["re-enabling access", "SET enable_external_access = true", /a SET statement is not allowed/],
    ["a second statement", "SELECT 1; SELECT 2", /2 statements is not allowed/],
  ];

  for (const [what, sql, message] of refusals) {
    it(`refuses ${what}`, async () => {
      const error = await sandbox.runUserQuery(sql, "out", "test flow").catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SandboxViolationError);
      expect((error as Error).message).toMatch(message);
      expect((error as SandboxViolationError).errorCode).toBe("PERMISSION_DENIED");
    });
  }

  it("keeps the lock-down even for the engine's own statements", async () => {
    await expect(sandbox.run("SET enable_external_access = true")).rejects.toThrow(
      /changing setting "enable_external_access"/,
    );
    await expect(sandbox.run("SET lock_configuration = false")).rejects.toThrow(/configuration is locked/);
    await expect(sandbox.run("INSTALL httpfs")).rejects.toBeInstanceOf(SandboxViolationError);
  });

  it("reads files inside its own folder, and the registered batch", async () => {
    const file = path.join(sandbox.dir, "batch.json");
    await writeFile(file, jsonLines(1, 3));
    await sandbox.run(`CREATE OR REPLACE TEMP TABLE batch AS SELECT * FROM read_json('${file}')`);
    await sandbox.runUserQuery(
      "SELECT count(*) AS n FROM batch JOIN source ON batch.id = source.id",
      "out",
      "t",
    );
    expect(await sandbox.rows("SELECT n FROM out")).toEqual([{ n: 1n }]);
  });

  it("reads a local folder's source files through links in its folder, and still not the folder", async () => {
    const landing = await mkdtemp(path.join(tmpdir(), "ebb-sandbox-landing-"));
    try {
      const store = new LocalObjectStore(landing);
      await store.put("a.json", new TextEncoder().encode(jsonLines(1, 3)));
      const origin = { flow: "f", dataset: "d", location: landing };
      const [landed] = await landFiles(store, sandbox, ["a.json"], origin, "json");
      // Linked, not copied: the batch's 66 MB of JSON took 0.3-1 s to copy on a loaded host.
      expect(path.dirname(landed!.localPath)).toBe(sandbox.dir);
      expect((await stat(landed!.localPath)).ino).toBe((await stat(path.join(landing, "a.json"))).ino);
      expect(await landed!.records).toBe(3);
      const [row] = await sandbox.rows(`SELECT count(*) AS n FROM read_json('${landed!.localPath}')`);
      expect(row).toEqual({ n: 3n });
      const error = await sandbox
        .runUserQuery(`SELECT * FROM read_json('${path.join(landing, "a.json")}')`, "out", "test flow")
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SandboxViolationError);
    } finally {
      await rm(landing, { recursive: true, force: true });
    }
  });

  it("counts a landed file's records whether linked or fetched: JSON's non-blank lines, CSV's rows less the header", async () => {
    const landing = await mkdtemp(path.join(tmpdir(), "ebb-sandbox-landing-"));
    try {
      const origin = { flow: "f", dataset: "d", location: landing };
      const text = { "a.json": '{"id":1}\n\n  \n{"id":2}\r\n{"id":3}', "b.csv": "id\n1\n2\n" };
      for (const store of [new LocalObjectStore(landing), new MemoryObjectStore()]) {
        for (const [key, body] of Object.entries(text)) await store.put(key, new TextEncoder().encode(body));
        const [json] = await landFiles(store, sandbox, ["a.json"], origin, "json");
        const [csv] = await landFiles(store, sandbox, ["b.csv"], origin, "csv");
        expect([await json!.records, await csv!.records]).toEqual([3, 2]);
      }
    } finally {
      await rm(landing, { recursive: true, force: true });
    }
  });

  it("reads a local bucket's table through links to its data files", async () => {
    const bucket = await mkdtemp(path.join(tmpdir(), "ebb-sandbox-bucket-"));
    const duck = await DuckSession.open();
    try {
      const store = new LocalObjectStore(bucket);
      const schema: StructType = {
        type: "struct",
        fields: [{ name: "id", type: "long", nullable: true, metadata: {} }],
      };
      const table = await DeltaTable.create(
        store,
        { schema, rows: { sql: "SELECT range AS id FROM range(5)" } },
        { duck },
      );
      await table.close();
      const snapshot = await currentSnapshot(store);
      const [file] = [...snapshot.files.values()];
      await registerTableFiles(sandbox, { kind: "table", name: "linked", store }, snapshot, [file!]);
      const inode = (await stat(path.join(bucket, dataFileKey(file!.path)))).ino;
      const [linked] = await sandbox.rows("SELECT count(*) AS n FROM linked");
      expect(linked).toEqual({ n: 5n });
      const names = (await sandbox.rows(`SELECT file FROM glob('${sandbox.dir}/*.parquet')`)).map((r) =>
        String(r["file"]),
      );
      const inodes = await Promise.all(names.map(async (name) => (await stat(name)).ino));
      expect(inodes).toContain(inode);
    } finally {
      duck.close();
      await rm(bucket, { recursive: true, force: true });
    }
  });

  it("reports a query that fails as a QueryError naming the flow", async () => {
    const error = await sandbox
      .runUserQuery("SELECT nope FROM source", "out", 'flow "f"')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QueryError);
    expect((error as Error).message).toMatch(/the SQL of flow "f" failed: .*nope/);
    await expect(sandbox.runUserQuery("SELEC 1", "out", 'flow "f"')).rejects.toThrow(/does not parse/);
  });
});

describe("a flow whose SQL reaches outside", () => {
  const harness = new EngineHarness();
  afterAll(() => harness.close());

  it("fails the update with the refusal, and writes nothing", async () => {
    await harness.land("a.json", jsonLines(1, 2));
    const pipeline = await harness.validate({
      name: "escape",
      catalog: "main",
      schema: "sandbox",
      datasets: [
        {
          type: "streaming_table",
          name: "stolen",
          flows: [
            {
              name: "steal",
              source: { type: "auto_loader", path: harness.landingUri, format: "json" },
              sql: "SELECT s.*, p.* FROM source s, read_csv('/etc/passwd') p",
            },
          ],
        },
      ],
    });
    const result = await harness.run(pipeline);
    expect(result.state).toBe("FAILED");
    expect(result.error).toBeInstanceOf(SandboxViolationError);
    expect((result.error as Error).message).toMatch(/access to "\/etc\/passwd"/);
    await expect(harness.rows(pipeline, "stolen")).rejects.toThrow(/no Delta table/);
  });
});
