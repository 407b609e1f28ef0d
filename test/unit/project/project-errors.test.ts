import { describe, expect, it } from "vitest";
import { ProjectError, readPipelineProject, type ProjectIssue } from "../../../shared/project/index.ts";
import { inlineProject } from "./project-files.ts";

/**
 * Bad input: each problem has its own code and names its file, line and column; a project with any
 * problem produces no definition at all (so nothing is created).
 */

function issues(files: Record<string, string>, spec?: string): ProjectIssue[] {
  try {
    readPipelineProject(inlineProject(files, spec));
  } catch (error) {
    expect(error).toBeInstanceOf(ProjectError);
    return [...(error as ProjectError).issues];
  }
  throw new Error("the project was accepted");
}

const RAW =
  "CREATE STREAMING TABLE raw AS SELECT * FROM STREAM read_files('${landing}', format => 'json');\n";

describe("a pipeline project's problems", () => {
  it("a syntax error: its code, file, line and column", () => {
    expect(issues({ "transformations/a.sql": `${RAW}\nCREATE STREAMING TABEL t AS SELECT 1;` })).toEqual([
      {
        file: "transformations/a.sql",
        line: 3,
        column: 8,
        code: "PROJECT_SQL_SYNTAX_ERROR",
        message:
          'expected STREAMING TABLE, MATERIALIZED VIEW, TEMPORARY VIEW or FLOW after CREATE, found "STREAMING"',
      },
    ]);
  });

  it("an unclosed string is a syntax error where it opens", () => {
    expect(
      issues({ "transformations/a.sql": "CREATE MATERIALIZED VIEW m AS\n  SELECT 'open FROM raw;" }),
    ).toMatchObject([{ line: 2, column: 10, code: "PROJECT_SQL_SYNTAX_ERROR" }]);
  });

  it("an unknown table, at the name that reads it", () => {
    expect(
      issues({
        "transformations/a.sql": `${RAW}CREATE MATERIALIZED VIEW m AS\nSELECT * FROM raw JOIN customers c ON raw.id = c.id;`,
      }),
    ).toEqual([
      expect.objectContaining({
        file: "transformations/a.sql",
        line: 3,
        column: 24,
        code: "PROJECT_UNKNOWN_DATASET",
      }),
    ]);
    expect(
      issues({ "transformations/a.sql": "CREATE STREAMING TABLE t AS SELECT * FROM STREAM(nowhere);" }),
    ).toMatchObject([{ line: 1, column: 50, code: "PROJECT_UNKNOWN_DATASET" }]);
  });

  it("a cycle across files, at each statement of it", () => {
    const found = issues({
      "transformations/a.sql": "CREATE MATERIALIZED VIEW a AS SELECT * FROM c;",
      "transformations/b.sql": "-- reads a\nCREATE MATERIALIZED VIEW b AS SELECT * FROM a;",
      "transformations/c.sql": "CREATE MATERIALIZED VIEW c AS SELECT * FROM b;",
    });
    expect(found.map((i) => [i.code, i.file, i.line, i.column])).toEqual([
      ["PROJECT_DEPENDENCY_CYCLE", "transformations/a.sql", 1, 26],
      ["PROJECT_DEPENDENCY_CYCLE", "transformations/c.sql", 1, 26],
      ["PROJECT_DEPENDENCY_CYCLE", "transformations/b.sql", 2, 26],
    ]);
    expect(found[0]!.message).toContain("a → c → b → a");
  });

  it("a flow into a materialized view", () => {
    expect(
      issues({
        "transformations/a.sql": `${RAW}CREATE MATERIALIZED VIEW m AS SELECT * FROM raw;`,
        "transformations/b.sql": "CREATE FLOW more AS INSERT INTO m BY NAME SELECT * FROM STREAM(raw);",
      }),
    ).toEqual([
      expect.objectContaining({
        file: "transformations/b.sql",
        line: 1,
        column: 33,
        code: "PROJECT_FLOW_INTO_NON_STREAMING_TABLE",
      }),
    ]);
  });

  it("two definitions of one table across files, at the second, naming the first", () => {
    const found = issues({
      "transformations/a.sql": RAW,
      "transformations/b.sql": "\n\nCREATE MATERIALIZED VIEW RAW AS SELECT 1 AS x;",
    });
    expect(found).toEqual([
      expect.objectContaining({
        file: "transformations/b.sql",
        line: 3,
        column: 26,
        code: "PROJECT_DUPLICATE_DEFINITION",
      }),
    ]);
    expect(found[0]!.message).toContain("transformations/a.sql:1:24");
  });

  it("an unsupported clause, by name", () => {
    const found = issues({
      "transformations/a.sql": `${RAW}CREATE STREAMING TABLE t CLUSTER BY (id) AS SELECT * FROM STREAM(raw);`,
    });
    expect(found).toEqual([
      expect.objectContaining({ line: 2, column: 26, code: "PROJECT_UNSUPPORTED_CLAUSE" }),
    ]);
    expect(found[0]!.message).toContain("CLUSTER BY");
    expect(
      issues({
        "transformations/a.sql":
          "CREATE STREAMING TABLE t AS SELECT * FROM STREAM read_files('s3://b/x', format => 'json', inferColumnTypes => 'true');",
      }),
    ).toEqual([
      expect.objectContaining({
        code: "PROJECT_UNSUPPORTED_CLAUSE",
        message: expect.stringContaining("inferColumnTypes"),
      }),
    ]);
  });

  it("a Python definition file is refused by name, with the way out", () => {
    const found = issues({
      "transformations/a.sql": RAW,
      "transformations/b.py": "# tables\nfrom pyspark import pipelines as dp\n\n@dp.table\ndef t(): ...\n",
    });
    expect(found).toEqual([
      expect.objectContaining({
        file: "transformations/b.py",
        line: 2,
        column: 1,
        code: "PROJECT_PYTHON_NOT_SUPPORTED",
      }),
    ]);
    expect(found[0]!.message).toContain("write its tables and flows as SQL");
  });

  it("a ${name} the configuration lacks, where it is written", () => {
    expect(
      issues({
        "transformations/a.sql":
          "CREATE STREAMING TABLE t AS\n  SELECT * FROM STREAM read_files('${nowhere}', format => 'json');",
      }),
    ).toEqual([expect.objectContaining({ line: 2, column: 36, code: "PROJECT_UNKNOWN_VARIABLE" })]);
  });

  it("after a substituted value, columns are still the file's", () => {
    const sql =
      "CREATE STREAMING TABLE t AS SELECT * FROM STREAM read_files('${landing}', format => 'json') JOIN missing;";
    expect(issues({ "transformations/a.sql": sql })).toEqual([
      expect.objectContaining({
        line: 1,
        column: sql.indexOf("missing") + 1,
        code: "PROJECT_UNKNOWN_DATASET",
      }),
    ]);
  });

  it("every problem at once, across files, with a code of its own", () => {
    const found = issues({
      "transformations/a.sql": "CREATE STREAMING TABLE t AS SELECT * FROM STREAM(nowhere);\nCREATE FOO;",
      "transformations/b.sql": "CREATE STREAMING TABLE empty;",
    });
    expect(found.map((i) => i.code).sort()).toEqual([
      "PROJECT_DATASET_WITHOUT_FLOW",
      "PROJECT_SQL_SYNTAX_ERROR",
      "PROJECT_UNKNOWN_DATASET",
    ]);
    const error = new ProjectError(found);
    expect(error.errorCode).toBe("INVALID_PIPELINE_PROJECT");
    expect(error.message).toContain("transformations/b.sql:1:24: PROJECT_DATASET_WITHOUT_FLOW");
  });

  it("a spec problem, at its line; globs that select nothing", () => {
    expect(issues({}, "name: x\nlibraries:\n  - glob:\n      includes: a/**\n")).toEqual([
      expect.objectContaining({
        line: 4,
        column: 7,
        code: "PROJECT_SPEC_INVALID",
        message: "libraries.0.glob.include is required",
      }),
      expect.objectContaining({
        line: 4,
        column: 7,
        code: "PROJECT_SPEC_INVALID",
        message: expect.stringContaining("includes is not a field of libraries.0.glob"),
      }),
    ]);
    expect(issues({ "other/a.sql": RAW })).toEqual([
      expect.objectContaining({ code: "PROJECT_NO_SQL_FILES" }),
    ]);
  });
});
