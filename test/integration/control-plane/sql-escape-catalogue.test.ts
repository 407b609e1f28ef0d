import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EbbApiError } from "../../../shared/client/ebb-client.ts";
import { ingestPipeline, startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * The security review's SQL escape attempts, through the HTTP API on the local runtime: each is
 * refused by the query endpoint, and a pipeline whose flow runs it is refused at create or fails its
 * update — nothing is read from or written outside the sandbox. `t` is the queried table, `source` the
 * micro-batch.
 */

const SECRET = "/etc/passwd";

const CATALOGUE: readonly (readonly [string, string])[] = [
  ["read a local file", `SELECT * FROM read_csv('${SECRET}')`],
  ["read a text file", `SELECT content FROM read_text('${SECRET}')`],
  ["read a blob", `SELECT content FROM read_blob('${SECRET}')`],
  ["read JSON", `SELECT * FROM read_json_auto('${SECRET}')`],
  ["read parquet by path", `SELECT * FROM '${SECRET}'`],
  ["read S3", "SELECT * FROM read_parquet('s3://bucket/data.parquet')"],
  ["read HTTP", "SELECT * FROM read_json('https://example.com/x.json')"],
  ["glob the file system", "SELECT * FROM glob('/etc/*')"],
  ["glob the temp folder", "SELECT * FROM glob('/tmp/ebb-*/**')"],
  ["glob the process's .tmp", "SELECT * FROM glob('.tmp/**')"],
  ["COPY to a file", "COPY (SELECT 1) TO '/tmp/ebb-escape.csv'"],
  ["COPY from a file", `COPY source FROM '${SECRET}'`],
  ["EXPORT DATABASE", "EXPORT DATABASE '/tmp/ebb-escape'"],
  ["ATTACH", "ATTACH '/tmp/ebb-escape.db' AS other"],
  ["INSTALL", "INSTALL httpfs"],
  ["LOAD", "LOAD httpfs"],
  ["SET", "SET enable_external_access = true"],
  ["RESET", "RESET enable_external_access"],
  ["PRAGMA", "PRAGMA enable_external_access"],
  ["a second statement", "SELECT 1; SELECT 2"],
  ["a statement after a comment", "SELECT 1 -- \n; COPY (SELECT 1) TO '/tmp/ebb-escape.csv'"],
  ["a statement hidden in a block comment", "SELECT 1 /* x */; ATTACH '/tmp/ebb-escape.db'"],
  ["a macro", "CREATE MACRO m() AS TABLE SELECT * FROM read_text('/etc/passwd')"],
  ["a secret", "CREATE SECRET s (TYPE s3, KEY_ID 'a', SECRET 'b')"],
  ["query()", `SELECT * FROM query('SELECT * FROM read_text(''${SECRET}'')')`],
  ["query_table()", `SELECT * FROM query_table('${SECRET}')`],
  ["a CTE over a file", `WITH x AS (SELECT * FROM read_text('${SECRET}')) SELECT * FROM x`],
  ["a subquery over a file", `SELECT (SELECT content FROM read_text('${SECRET}'))`],
  ["a table function in a join", `SELECT * FROM (SELECT 1 AS id) JOIN read_text('${SECRET}') ON true`],
  ["getenv", "SELECT getenv('HOME')"],
  ["DDL", "CREATE TABLE escape AS SELECT 1"],
  ["DML", "DELETE FROM t"],
];

describe("SQL escape catalogue", () => {
  let cp: TestControlPlane;

  beforeAll(async () => {
    cp = await startTestControlPlane();
    const { pipeline_id } = await cp.client.createPipeline(pipeline("escapes", "SELECT * FROM source"));
    await cp.land("a.json", [{ id: 1 }]);
    const { update_id } = await cp.client.startUpdate(pipeline_id);
    expect((await cp.client.waitForUpdate(pipeline_id, update_id, { intervalMs: 200 })).state).toBe(
      "COMPLETED",
    );
  });
  afterAll(() => cp?.close());

  const pipeline = (name: string, sql: string) =>
    ingestPipeline({ name, catalog: "escape", schema: name, path: cp.landing, sql });

  it.each(CATALOGUE)("the query endpoint refuses: %s", async (_what, sql) => {
    const error = await cp.client.query("escape.escapes.raw", { sql }).catch((e: unknown) => e);
    expect(error, sql).toBeInstanceOf(EbbApiError);
    expect((error as EbbApiError).status, sql).toBeGreaterThanOrEqual(400);
    expect((error as EbbApiError).status, sql).toBeLessThan(500);
    expect((error as EbbApiError).message).not.toContain("root:");
  });

  it.each(CATALOGUE.map(([what, sql], i) => [what, sql, i] as const))(
    "pipeline SQL is refused at create or fails its update: %s",
    async (_what, sql, i) => {
      const created = await cp.client.createPipeline(pipeline(`escape_${i}`, sql)).catch((e: unknown) => e);
      if (created instanceof EbbApiError) {
        expect(created.status, sql).toBe(400);
        return;
      }
      const { pipeline_id } = created as { pipeline_id: string };
      const { update_id } = await cp.client.startUpdate(pipeline_id);
      const update = await cp.client.waitForUpdate(pipeline_id, update_id, { intervalMs: 200 });
      expect(update.state, sql).toBe("FAILED");
      expect(update.error?.error_code, sql).not.toBe("INTERNAL_ERROR");
    },
  );
});
