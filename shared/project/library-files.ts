import picomatch from "picomatch";
import { PROJECT_ISSUE_CODES, type ProjectIssue } from "./errors.ts";

/**
 * The definition files a spec's `libraries` globs select from the project's files (paths relative to
 * the spec, `/`-separated), in path order: SQL files are read; a Python file is refused by name
 * (Ebb reads SQL pipelines only), as is any other kind of file.
 */

export interface SelectedFiles {
  readonly sql: readonly string[];
  readonly issues: readonly ProjectIssue[];
}

/** The import that makes a file an SDP Python definition file. */
const PYTHON_PIPELINE =
  /^\s*(from\s+pyspark\s+import\s+pipelines|import\s+pyspark\.pipelines|from\s+pyspark\.pipelines)/m;

export function selectLibraryFiles(
  specFile: string,
  include: readonly string[],
  files: ReadonlyMap<string, string>,
): SelectedFiles {
  const matches = picomatch(
    include.map((glob) => glob.replace(/^\.\//, "")),
    { dot: false },
  );
  const selected = [...files.keys()].filter((path) => matches(path)).sort();
  const issues: ProjectIssue[] = [];
  const sql: string[] = [];
  for (const path of selected) {
    if (/\.sql$/i.test(path)) {
      sql.push(path);
    } else if (/\.py$/i.test(path)) {
      const text = files.get(path) ?? "";
      const line = text.slice(0, Math.max(0, text.search(PYTHON_PIPELINE))).split("\n").length;
      issues.push({
        file: path,
        line: PYTHON_PIPELINE.test(text) ? line : 1,
        column: 1,
        code: PROJECT_ISSUE_CODES.pythonNotSupported,
        message:
          "a Python definition file (from pyspark import pipelines as dp): Ebb runs SQL pipelines only; write its tables and flows as SQL (CREATE STREAMING TABLE …, CREATE FLOW …) in a .sql file, or leave it out of libraries",
      });
    } else {
      issues.push({
        file: path,
        line: 1,
        column: 1,
        code: PROJECT_ISSUE_CODES.specInvalid,
        message: `libraries select ${path}, which is neither a .sql nor a .py file: narrow the glob (e.g. transformations/**/*.sql)`,
      });
    }
  }
  if (selected.length === 0) {
    issues.push({
      file: specFile,
      line: 1,
      column: 1,
      code: PROJECT_ISSUE_CODES.noSqlFiles,
      message: `libraries (${include.join(", ")}) select no file of the project: check the globs, which are relative to ${specFile}`,
    });
  }
  return { sql, issues };
}
