import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXIT, runCli } from "../../../shared/cli/main.ts";
import { EbbApiError } from "../../../shared/client/ebb-client.ts";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * Bad input in a pipeline project, through the production paths — the API's `project` and
 * `ebb deploy --spec` over real files: each problem answers 400 with its own code and the file, line
 * and column of it, and no pipeline is created.
 */

const SPEC =
  "name: broken\nconfiguration:\n  landing: s3://landing/in\nlibraries:\n  - glob:\n      include: 'transformations/**'\n";
const RAW =
  "CREATE STREAMING TABLE raw AS SELECT * FROM STREAM read_files('${landing}', format => 'json');\n";

const CASES: readonly {
  readonly problem: string;
  readonly files: Record<string, string>;
  readonly code: string;
  readonly at: string;
}[] = [
  {
    problem: "a syntax error",
    files: { "transformations/a.sql": `${RAW}\nCREATE STREAMING TABEL t AS SELECT 1;` },
    code: "PROJECT_SQL_SYNTAX_ERROR",
    at: "transformations/a.sql:3:8",
  },
  {
    problem: "an unknown table",
    files: {
      "transformations/a.sql": `${RAW}CREATE MATERIALIZED VIEW m AS\nSELECT * FROM raw JOIN customers c ON raw.id = c.id;`,
    },
    code: "PROJECT_UNKNOWN_DATASET",
    at: "transformations/a.sql:3:24",
  },
  {
    problem: "a cycle across files",
    files: {
      "transformations/a.sql": "CREATE MATERIALIZED VIEW a AS SELECT * FROM b;",
      "transformations/b.sql": "-- reads a\nCREATE MATERIALIZED VIEW b AS SELECT * FROM a;",
    },
    code: "PROJECT_DEPENDENCY_CYCLE",
    at: "transformations/b.sql:2:26",
  },
  {
    problem: "a flow into a materialized view",
    files: {
      "transformations/a.sql": `${RAW}CREATE MATERIALIZED VIEW m AS SELECT * FROM raw;`,
      "transformations/b.sql": "CREATE FLOW more AS INSERT INTO m BY NAME SELECT * FROM STREAM(raw);",
    },
    code: "PROJECT_FLOW_INTO_NON_STREAMING_TABLE",
    at: "transformations/b.sql:1:33",
  },
  {
    problem: "two definitions of one table across files",
    files: {
      "transformations/a.sql": RAW,
      "transformations/b.sql": "\n\nCREATE MATERIALIZED VIEW RAW AS SELECT 1 AS x;",
    },
    code: "PROJECT_DUPLICATE_DEFINITION",
    at: "transformations/b.sql:3:26",
  },
  {
    problem: "an unsupported clause",
    files: {
      "transformations/a.sql": `${RAW}CREATE STREAMING TABLE t CLUSTER BY (id) AS SELECT * FROM STREAM(raw);`,
    },
    code: "PROJECT_UNSUPPORTED_CLAUSE",
    at: "transformations/a.sql:2:26",
  },
  {
    problem: "a Python definition file",
    files: {
      "transformations/a.sql": RAW,
      "transformations/b.py": "# tables\nfrom pyspark import pipelines as dp\n\n@dp.table\ndef t(): ...\n",
    },
    code: "PROJECT_PYTHON_NOT_SUPPORTED",
    at: "transformations/b.py:2:1",
  },
];

describe("a pipeline project's bad input through the API and ebb deploy", () => {
  let cp: TestControlPlane;
  let folder: string;

  beforeAll(async () => {
    cp = await startTestControlPlane();
    folder = await mkdtemp(path.join(os.tmpdir(), "ebb-project-errors-"));
  });
  afterAll(async () => {
    await cp?.close();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  // Pipelines named as the spec names them: other test files share the stand-ins' tables and create
  // pipelines of their own meanwhile.
  const pipelines = async () =>
    (await cp.client.listPipelines()).statuses.filter((p) => p.name === "broken").length;

  it.each(CASES)("$problem: $code at $at, nothing created", async ({ problem, files, code, at }) => {
    const before = await pipelines();

    const error = await cp.client.createPipeline({ project: { spec: SPEC, files } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EbbApiError);
    expect(error).toMatchObject({ status: 400, errorCode: code });
    expect((error as Error).message).toContain(`${at}: ${code}`);

    const root = path.join(folder, problem.replaceAll(" ", "-"));
    for (const [file, text] of Object.entries({ "spark-pipeline.yml": SPEC, ...files })) {
      await mkdir(path.dirname(path.join(root, file)), { recursive: true });
      await writeFile(path.join(root, file), text);
    }
    let err = "";
    const exit = await runCli(
      [
        "deploy",
        "--spec",
        path.join(root, "spark-pipeline.yml"),
        "--endpoint",
        cp.plane.endpoint,
        "--token",
        cp.plane.token,
      ],
      { out: () => undefined, err: (text) => void (err += text) },
    );
    expect(exit).not.toBe(EXIT.ok);
    expect(err).toContain(`${at}: ${code}`);

    expect(await pipelines()).toBe(before);
  });
});
