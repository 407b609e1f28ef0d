import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DuckSession, withDuckSession } from "../../../shared/duck/duck-session.ts";

/**
 * Sessions without `config` share the process's DuckDB instance, each on its own connection: what one
 * makes (TEMP objects, variables, session settings) the others never see; a session with `config` (the
 * sandbox's) has an instance no other open session uses, whose instance-wide lock-down reaches no
 * other session.
 */
describe("DuckDB sessions", () => {
  let dir: string;
  let file: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "ebb-duck-test-"));
    file = path.join(dir, "one.parquet");
    await withDuckSession((duck) => duck.run(`COPY (SELECT 1 AS x) TO '${file}' (FORMAT parquet)`));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("keeps TEMP tables and views, variables and the time zone to the session that set them", async () => {
    const a = await DuckSession.open();
    const b = await DuckSession.open();
    try {
      await a.run("CREATE TEMP TABLE staged AS SELECT 'a' AS who");
      await b.run("CREATE TEMP TABLE staged AS SELECT 'b' AS who");
      expect(await a.rows("SELECT who FROM staged")).toEqual([{ who: "a" }]);
      expect(await b.rows("SELECT who FROM staged")).toEqual([{ who: "b" }]);

      await a.run("CREATE TEMP VIEW only_a AS SELECT 1 AS x");
      await expect(b.rows("SELECT * FROM only_a")).rejects.toThrow(/only_a does not exist/);

      await a.run("SET VARIABLE survivors = 42");
      expect(await a.rows("SELECT getvariable('survivors') AS v")).toEqual([{ v: 42 }]);
      expect(await b.rows("SELECT getvariable('survivors') AS v")).toEqual([{ v: null }]);

      await a.run("SET TimeZone = 'America/New_York'");
      expect(await b.rows("SELECT current_setting('TimeZone') AS tz")).toEqual([{ tz: "UTC" }]);
    } finally {
      a.close();
      b.close();
    }
  });

  it("shares one instance between sessions without config, which closing one leaves open", async () => {
    const a = await DuckSession.open();
    const b = DuckSession.deferred();
    try {
      // A non-TEMP table is instance-wide: seen from the other session (why Ebb creates none).
      await a.run("CREATE TABLE shared_probe AS SELECT 1 AS x");
      expect(await b.rows("SELECT x FROM shared_probe")).toEqual([{ x: 1 }]);
      a.close();
      expect(await b.rows("SELECT x FROM shared_probe")).toEqual([{ x: 1 }]);
      await b.run("DROP TABLE shared_probe");
    } finally {
      a.close();
      b.close();
    }
    // A TEMP table goes with its connection; the instance stays for the next session.
    expect(await withDuckSession((duck) => duck.rows("SELECT count(*) AS n FROM duckdb_tables()"))).toEqual([
      { n: 0n },
    ]);
  });

  it("gives a session with config an instance of its own, whose lock-down reaches no other session", async () => {
    const plain = await DuckSession.open();
    const locked = await DuckSession.open({ config: { threads: "1" } });
    try {
      await plain.run("CREATE TABLE outside_probe AS SELECT 1 AS x");
      await expect(locked.rows("SELECT * FROM outside_probe")).rejects.toThrow(/does not exist/);
      await locked.run("SET enable_external_access = false");
      await expect(locked.rows(`SELECT * FROM read_parquet('${file}')`)).rejects.toThrow(/Permission Error/);
      expect(await plain.rows(`SELECT x FROM read_parquet('${file}')`)).toEqual([{ x: 1 }]);
      expect(await withDuckSession((duck) => duck.rows(`SELECT x FROM read_parquet('${file}')`))).toEqual([
        { x: 1 },
      ]);
      await plain.run("DROP TABLE outside_probe");
    } finally {
      plain.close();
      locked.close();
    }
  });

  it("is what Ebb's SQL relies on: it creates only TEMP objects, which no other session sees", () => {
    // CREATE [OR REPLACE] TABLE|VIEW|... followed by a name: a DuckDB object in the shared catalog.
    const shared = /CREATE\s+(?:OR\s+REPLACE\s+)?(?:TABLE|VIEW|MACRO|SEQUENCE|SCHEMA|TYPE|SECRET)\s+[\w"$`{]/;
    const offenders = sourceFiles(path.resolve(import.meta.dirname, "../../../shared")).filter((source) =>
      shared.test(readFileSync(source, "utf8")),
    );
    expect(offenders).toEqual([]);
  });
});

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith(".ts") ? [full] : [];
  });
}
