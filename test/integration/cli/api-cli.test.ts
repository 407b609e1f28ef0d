import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import packageJson from "../../../package.json" with { type: "json" };
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXIT, runCli, type CliIo } from "../../../shared/cli/main.ts";
import { tablePrefix } from "../../../shared/store/bucket-layout.ts";
import { testAws } from "../../support/aws.ts";
import { ingestPipeline, startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/** The rewind scenario driven only through the `ebb` CLI against the local runtime's API. */
describe("ebb CLI over the API", () => {
  let cp: TestControlPlane;
  /** `ebb` on an 80-column terminal whose user answers yes (unless `io` says otherwise). */
  const ebbWith = async (io: Partial<CliIo>, ...args: string[]) => {
    let out = "";
    let err = "";
    const code = await runCli([...args, "--endpoint", cp.plane.endpoint, "--token", cp.plane.token], {
      out: (text) => (out += text),
      err: (text) => (err += text),
      confirm: async () => true,
      width: 80,
      ...io,
    });
    return { code, out, err };
  };
  const ebb = (...args: string[]) => ebbWith({}, ...args);
  const definitionFile = async (name: string, sql: string) => {
    const file = path.join(cp.landing, "..", `${path.basename(cp.landing)}-${name}.yaml`);
    await writeFile(
      file,
      [
        "name: cli demo",
        "catalog: cli",
        "schema: demo",
        "configuration: { pipelines.rewind.enabled: 'true' }",
        "channel: PREVIEW",
        "photon: true",
        "datasets:",
        "  - type: streaming_table",
        "    name: raw",
        "    flows:",
        "      - name: ingest",
        `        source: { type: auto_loader, path: ${cp.landing}, format: json, schema: { id: BIGINT, v: BIGINT } }`,
        "        sql: SELECT * FROM source",
        "  - type: streaming_table",
        "    name: good",
        "    flows:",
        "      - name: keep",
        "        source: { type: stream, dataset: raw }",
        `        sql: ${sql}`,
      ].join("\n"),
    );
    return file;
  };

  beforeAll(async () => {
    cp = await startTestControlPlane();
  });
  afterAll(() => cp?.close());

  it("creates, runs, rewinds with confirmation, deploys a fix and replays; exit codes mean something", async () => {
    const created = await ebb("pipelines", "create", await definitionFile("v1", "SELECT id, v FROM source"));
    expect(created.code, created.err).toBe(EXIT.ok);
    const pipelineId = created.out.trim();
    // The id alone on stdout (for `id=$(ebb pipelines create …)`), the settings Ebb ignores on stderr.
    expect(created.out).toMatch(/^[0-9a-f-]{36}\n$/);
    expect(created.err).toMatch(/^ebb: ignored setting channel: .+\nebb: ignored setting photon: .+\n$/);

    await cp.land("1.json", [{ id: 1, v: 1 }]);
    const first = await ebb("run", pipelineId);
    expect(first.code, first.err).toBe(EXIT.ok);
    expect(first.out).toContain("COMPLETED");

    // A table that fits the terminal, the pipeline's id whole; --json the API's answer. Other test
    // files' pipelines share the listing, so a wider one may cut the last column.
    const listed = await ebb("pipelines", "list");
    const lines = listed.out.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^pipeline_id\s+name\s+state\s+version\s+latest_u/);
    expect(lines.every((line) => line.length <= 80)).toBe(true);
    expect(lines.find((line) => line.startsWith(pipelineId))).toMatch(/ cli demo +IDLE +1 +COMPLETED/);
    const listedJson = (await ebb("pipelines", "list", "--json")).out
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { pipeline_id: string })
      .find((p) => p.pipeline_id === pipelineId);
    expect(listedJson).toMatchObject({ pipeline_id: pipelineId, latest_updates: [{ state: "COMPLETED" }] });

    const points = await ebb("rewind-points", pipelineId, "--json");
    const point = JSON.parse(points.out.trim().split("\n")[0]!) as { rewind_point_id: string };

    await cp.land("2.json", [{ id: 2, v: -1 }]);
    expect((await ebb("run", pipelineId)).code).toBe(EXIT.ok);
    expect(
      JSON.parse((await ebb("query", "cli.demo.good", "SELECT count(*) AS n FROM t", "--json")).out),
    ).toEqual({ n: 2 });
    // Where the bad row came in, and the rewinds that go back before it: to the midpoint, or to the
    // owning pipeline's newest point from before it (the first run's).
    const onset = await ebb("onset", "cli.demo.good", "v < 0");
    expect(onset.code, onset.err).toBe(EXIT.ok);
    const onsetLines = onset.out.split("\n");
    expect(onsetLines[0]).toMatch(/^cli\.demo\.good: first matching change in version 2, committed \S+Z$/);
    expect(onsetLines[1]).toMatch(/^last good: version 1, committed \S+Z$/);
    expect(onsetLines[2]).toMatch(
      new RegExp(
        `^rewind between them: ebb rewind ${pipelineId} --timestamp '\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d' --dry-run$`,
      ),
    );
    expect(onsetLines[3]).toMatch(
      new RegExp(
        `^newest rewind point before it: ${point.rewind_point_id}, \\S+Z \\(cli\\.demo\\.good at version 1\\): ` +
          `ebb rewind ${pipelineId} --point ${point.rewind_point_id} --dry-run$`,
      ),
    );
    expect(onsetLines.slice(4)).toEqual([""]);
    expect((await ebb("onset", "cli.demo.good", "v > 100")).out).toBe(
      "cli.demo.good: no change from version 1 on matches the predicate\n",
    );

    const dry = await ebb("rewind", pipelineId, "--latest", "--dry-run");
    expect(dry.code, dry.err).toBe(EXIT.ok);
    // What the rewind would restore, from the dry run's rewind_summary: both tables at their latest versions.
    expect(dry.out).toContain("dry run, nothing changed");
    expect(dry.out).toMatch(/cli\.demo\.raw\s+RESTORE\s+2\n/);
    expect(dry.out).toMatch(/ingest@2, keep@2/);
    // A selection's dry run shows what that rewind restores, not every table the point holds.
    const selected = await ebb(
      "rewind",
      pipelineId,
      "--latest",
      "--datasets",
      "cli.demo.good",
      "--no-cascade",
      "--dry-run",
    );
    expect(selected.code, selected.err).toBe(EXIT.ok);
    expect(selected.out).toMatch(/cli\.demo\.good\s+RESTORE\s+\d+\n/);
    expect(selected.out).not.toContain("cli.demo.raw");
    expect(selected.out).toMatch(/flows back to checkpoints keep@2\n/);
    // Declined at the prompt: nothing started, and a script sees it failed.
    const updatesBefore = (await cp.client.listUpdates(pipelineId)).updates.length;
    const declined = await ebbWith({ confirm: async () => false }, "rewind", pipelineId, "--latest");
    expect(declined.code).toBe(EXIT.failed);
    expect(declined.err).toBe("ebb: not rewound\n");
    expect((await cp.client.listUpdates(pipelineId)).updates.length).toBe(updatesBefore);
    const rewound = await ebb(
      "rewind",
      pipelineId,
      "--point",
      point.rewind_point_id,
      "--datasets",
      "cli.demo.raw",
    );
    expect(rewound.code, rewound.err).toBe(EXIT.ok);
    expect(rewound.out).toContain("restores_version");
    // What it did: raw restored to version 1 by a RESTORE commit (version 3), the cascade took good
    // with it, and both flows moved back one checkpoint; then how to replay.
    expect(rewound.out).toMatch(/cli\.demo\.raw\s+RESTORE\s+1\s+3\s+1\s+0\s+ingest 2->1\n/);
    expect(rewound.out).toMatch(/cli\.demo\.good\s+RESTORE\s+1\s+3\s+1\s+0\s+keep 2->1\n/);
    expect(rewound.out).toContain(`replay: ebb run ${pipelineId}`);
    expect(
      JSON.parse((await ebb("query", "cli.demo.good", "SELECT count(*) AS n FROM t", "--json")).out),
    ).toEqual({ n: 1 });

    expect(
      (
        await ebb(
          "pipelines",
          "update",
          pipelineId,
          await definitionFile("v2", "SELECT id, v FROM source WHERE v > 0"),
        )
      ).code,
    ).toBe(EXIT.ok);
    expect((await ebb("run", pipelineId)).code).toBe(EXIT.ok);
    expect(
      JSON.parse((await ebb("query", "cli.demo.good", "SELECT count(*) AS n FROM t", "--json")).out),
    ).toEqual({ n: 1 });

    const history = await ebb("history", "cli.demo.good");
    expect(history.out).toContain("RESTORE");
    const events = await ebb("events", pipelineId, "--type", "rewind_summary", "--json");
    expect(events.out.trim().split("\n").length).toBeGreaterThanOrEqual(3);
    // A log longer than `--max` says so on stderr; one shown whole says nothing.
    const newest = await ebb("events", pipelineId, "--max", "2", "--json");
    expect(newest.out.trim().split("\n")).toHaveLength(2);
    expect(newest.err).toContain("the newest 2 events shown; --max <n> shows more");
    const whole = await ebb("events", pipelineId, "--max", "1000", "--json");
    expect(whole.out.trim().split("\n").length).toBeGreaterThan(2);
    expect(whole.err).toBe("");

    const refused = await ebb("rewind", pipelineId, "--point", "nope", "--yes");
    expect(refused.code).toBe(EXIT.refused);
    expect(refused.err).toContain("INVALID_REWIND_SPECIFICATION.REWIND_POINT_NOT_FOUND");
    expect((await ebb("rewind", pipelineId)).code).toBe(EXIT.usage);
    expect((await ebb("updates", "list", pipelineId)).out).toContain("COMPLETED");

    const sql = await ebb(
      "sql",
      `SELECT id FROM event_log('${pipelineId}') WHERE event_type = 'rewind_summary' AND details:rewind_summary.dry_run = true ORDER BY timestamp DESC`,
      "--json",
    );
    expect(sql.code, sql.err).toBe(EXIT.ok);
    const ids = sql.out
      .trim()
      .split("\n")
      .map((line) => (JSON.parse(line) as { id: string }).id);
    expect(ids).toContain(point.rewind_point_id);
    const table = await ebb("sql", "SELECT count(*) AS n FROM good", "--catalog", "cli", "--schema", "demo");
    expect(table.out).toMatch(/n\s*\n.*1/s);
    const failed = await ebb("sql", "SELECT spark_only_fn(1)");
    expect(failed.code).toBe(EXIT.refused);
    expect(failed.err).toContain("[UNSUPPORTED_SQL]");
    expect(failed.err).toContain("function spark_only_fn is not a Spark function Ebb runs");

    // OPTIMIZE answers in a sentence (--json gives the API's answer).
    const planned = await ebb("optimize", "cli.demo.raw", "--dry-run");
    expect(planned.out).toMatch(
      /^cli\.demo\.raw: would compact 2 files \([\d,]+ bytes\) in 1 bin at version \d+ \(dry run, nothing written\)\n$/,
    );
    const optimized = await ebb("optimize", "cli.demo.raw");
    expect(optimized.out).toMatch(
      /^cli\.demo\.raw: compacted 2 files \([\d,]+ bytes\) into 1 file \([\d,]+ bytes\), version (\d+) \(read version \d+\)\n$/,
    );
    const again = await ebb("optimize", "cli.demo.raw", "--json");
    expect(JSON.parse(again.out)).toMatchObject({ dry_run: false, metrics: { num_bins: 0 } });
  });

  it("refuses without running anything: a rewind nobody can confirm, a definition file it cannot read", async () => {
    const run = async (...args: string[]) => {
      let out = "";
      let err = "";
      // No terminal: no one to confirm; an endpoint nothing listens on, so any request would fail.
      const code = await runCli([...args, "--endpoint", "http://127.0.0.1:9", "--token", "t"], {
        out: (text) => (out += text),
        err: (text) => (err += text),
      });
      return { code, out, err };
    };
    const unconfirmed = await run("rewind", "some-pipeline", "--latest", "--stop");
    expect(unconfirmed).toEqual({
      code: EXIT.usage,
      out: "",
      err: "ebb: a rewind changes some-pipeline's tables and there is no terminal to confirm it: pass --yes (or --dry-run to see what it would restore)\n",
    });
    const missing = path.join(cp.landing, "nope.yaml");
    expect(await run("pipelines", "create", missing)).toEqual({
      code: EXIT.usage,
      out: "",
      err: `ebb: cannot read the definition file ${missing}: no such file\n`,
    });
    const broken = path.join(cp.landing, "..", `${path.basename(cp.landing)}-broken.yaml`);
    await writeFile(broken, "name: [unclosed\n");
    const unreadable = await run("pipelines", "update", "some-pipeline", broken);
    expect(unreadable.code).toBe(EXIT.usage);
    expect(unreadable.err).toMatch(
      new RegExp(`^ebb: the definition file ${broken}: .*not valid YAML or JSON`),
    );
    expect(unreadable.err.trimEnd().split("\n")).toHaveLength(1);
    expect(await run("--version")).toMatchObject({ code: EXIT.ok, out: `${packageJson.version}\n` });
  });

  it("refuses to restore a pipeline's table by its folder unless forced, pointing at ebb rewind", async () => {
    const landing = path.join(cp.landing, "restore-refused");
    await mkdir(landing, { recursive: true });
    const { pipeline_id } = await cp.client.createPipeline(
      ingestPipeline({ name: "restore refused", catalog: "cli", schema: "restore", path: landing }),
    );
    for (const id of [1, 2]) {
      await writeFile(path.join(landing, `${id}.json`), `{"id": ${id}}\n`);
      expect((await ebb("run", pipeline_id)).code).toBe(EXIT.ok);
    }
    const { endpoints, storage } = testAws();
    const saved = { ...process.env };
    Object.assign(process.env, {
      EBB_BUCKET: storage.bucket,
      AWS_ENDPOINT_URL_S3: endpoints.s3Endpoint,
      AWS_REGION: endpoints.region,
      AWS_ACCESS_KEY_ID: endpoints.credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: endpoints.credentials.secretAccessKey,
    });
    try {
      const folder = `s3://${storage.bucket}/${tablePrefix({ catalog: "cli", schema: "restore", table: "raw" })}`;
      const refused = await ebb("table", "restore", folder, "--version", "1");
      expect(refused.code).toBe(EXIT.failed);
      expect(refused.err).toContain("PIPELINE_TABLE_RESTORE_REFUSED");
      expect(refused.err).toContain("pipeline table cli.restore.raw");
      expect(refused.err).toContain("ebb rewind");
      const untouched = await ebb("table", "history", folder, "--limit", "1", "--json");
      expect(JSON.parse(untouched.out)).toMatchObject({ version: 2, operation: "STREAMING UPDATE" });

      const forced = await ebb("table", "restore", folder, "--version", "1", "--force", "--json");
      expect(forced.code, forced.err).toBe(EXIT.ok);
      expect(JSON.parse(forced.out)).toMatchObject({ version: 3 });
    } finally {
      process.env = saved;
    }
  });
});
