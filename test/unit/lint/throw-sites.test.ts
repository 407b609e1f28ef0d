import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Every `throw new X(` in code a handler can reach (functions/ and what it imports, transitively):
 * X must be a `CodedError` whose `errorCode` is not `INTERNAL_ERROR` (the API answers it with its own
 * code), unless the site is a real server fault listed below with the reason. A new plain
 * `throw new Error(…)`, or a new class left at `INTERNAL_ERROR`, fails here until it gets its own
 * code or is argued into the list. The error-to-HTTP table itself is `error-response.ts`.
 */

const ROOT = path.resolve(import.meta.dirname, "../../..");

/** `file: { Class: count }` — server faults: invariants, outages, Ebb's own deployment. */
const SERVER_FAULTS: Readonly<Record<string, Readonly<Record<string, number>>>> = {
  // Invariants of Ebb's own plans and values: a broken one is an Ebb bug.
  "shared/control/updates/steps/reset-step.ts": { TypeError: 1 },
  "shared/control/updates/steps/rewind-step.ts": { TypeError: 1 },
  // A branch's creation: the rewind plan's checkpoint missing, or a copy's seq or HEAD taken meanwhile.
  "shared/control/branches/create-branch.ts": { TypeError: 3 },
  // A publish: a checkpoint's seq or HEAD taken meanwhile (the pipeline is held), a branch log with no live log, a reader behind (the request refused it).
  "shared/control/updates/steps/publish-execution.ts": { TypeError: 5 },
  // RunBudgetSpentError is a signal the state machine retries (RunFlow's budget spent), never an answer.
  "shared/control/updates/steps/run-step.ts": { TypeError: 1, RunBudgetSpentError: 1 },
  "shared/delta/log/log-paths.ts": { RangeError: 1 },
  "shared/engine/auto-cdc/cdc-state.ts": { Error: 1 },
  "shared/engine/dataset-catalog.ts": { RangeError: 1 },
  "shared/engine/table-stream-plan.ts": { RangeError: 1 },
  // Compiling a validated definition: validation refused the join, Ebb's own template did not parse.
  "shared/pipeline/plan/compile-flow.ts": { RangeError: 1 },
  "shared/pipeline/validate-pipeline.ts": { RangeError: 1 },
  // Reading a pipeline project: a schema's problems are caught and answered with their PROJECT_*
  // code, file, line and column; the plain Error guards the graph's own invariant.
  "shared/project/dataflow-graph.ts": { Error: 1 },
  "shared/project/spark-schema.ts": { SchemaSyntax: 4 },
  // Translating Spark SQL: a macro's refusal is caught and answered as UNSUPPORTED_SQL naming the
  // function; the plain Errors are Ebb's own translations failing to parse or print.
  "shared/sql/spark-macros.ts": { MacroRefusal: 15 },
  "shared/sql/duckdb-tree-rewrite.ts": { Error: 5, MacroRefusal: 1 },
  "shared/state/bucket-hash.ts": { Error: 1 },
  "shared/state/state-store.ts": { Error: 2 },
  "shared/store/node-sha256.ts": { Error: 1 },
  // A transition given another adapter's write, or more writes than one transaction holds.
  "shared/store/dynamo-store-writes.ts": { TypeError: 1 },
  "shared/store/store-writes.ts": { TypeError: 1 },
  "shared/object-store/object-key.ts": { InvalidKeyError: 6 },
  "shared/store/query-pages.ts": { RangeError: 1 },
  "shared/store/time-ordered-id.ts": { RangeError: 1 },
  // State files Ebb wrote that are not as it wrote them: damage to Ebb's own storage.
  "shared/engine/file-set-state.ts": { CheckpointStateError: 2 },
  "shared/engine/flow-source.ts": { CheckpointStateError: 4 },
  // Caught by their callers and answered with a coded error (or a result).
  "shared/delta/log/exact-json.ts": { SyntaxError: 1 },
  // A checkpoint's column chunk not as its footer says: the checkpoint reader answers DELTA_LOG_CORRUPT naming the file.
  "shared/delta/log/parquet-leaves.ts": { Error: 4 },
  "shared/delta/table/table-properties.ts": { Error: 2 },
  "shared/engine/sandbox.ts": { Error: 1 },
  // SparkBatchHandedOff: RunFlow's answer to the state machine (run-step.ts), never a failure; a
  // manifest URI outside the bucket is Ebb's own bug.
  "shared/engine/spark/state-machine-spark-jobs.ts": { SparkBatchHandedOff: 1, TypeError: 1 },
  // BatchOversizedError: the flow runner plans the batch again, in halves (batch-replan.ts).
  // (micro-batch: a flow the plan says is not AUTO CDC handed to the AUTO CDC path, a caller bug.)
  "shared/engine/micro-batch.ts": { EngineError: 2, BatchOversizedError: 1, RangeError: 1 },
  // Ebb's own deployment: a limit the environment sets that is not one.
  "shared/engine/sql-limits.ts": { TypeError: 2 },
  "shared/engine/task-sizing.ts": { TypeError: 1 },
  "shared/control/tables/answer-size.ts": { TypeError: 1 },
  "shared/pipeline/column-type.ts": { ColumnTypeSyntaxError: 16 },
  // An id collision the store retries past; Kafka answering what its protocol rules out.
  "shared/store/dynamo-pipelines-repository.ts": { StoreError: 1 },
  "shared/store/dynamo-updates-repository.ts": { StoreError: 1 },
  "shared/store/kafka-topics.ts": { Error: 4, KafkaOffsetsGoneError: 1 },
  // Ebb's own deployment: environment variables the stack or `npm start` sets, the bundled parser.
  "functions/runtime/control-plane-from-env.ts": { Error: 1 },
  "functions/runtime/environment.ts": { MissingEnvironmentError: 1 },
  // The local Spark driver not starting: the job runner answers it as SPARK_JOB_FAILED.
  "functions/runtime/local-spark-jobs.ts": { Error: 1 },
  // A failed delivery of a lifecycle event, caught by its retries and logged as a WARN: never answered.
  "functions/runtime/eventbridge-lifecycle-events.ts": { Error: 2 },
  "functions/runtime/webhook-lifecycle-events.ts": { Error: 1 },
  "shared/store/checkpoints-repository.ts": { StoreConfigurationError: 1 },
  "shared/pipeline/sql-references.ts": { SqlParserUnavailableError: 1 },
  // The crash-injection hook of the recovery tests.
  "shared/engine/crash-points.ts": { InjectedCrashError: 1 },
};

/** Classes error-response.ts answers by class rather than by their code. */
const MAPPED_BY_CLASS: Readonly<Record<string, string>> = {
  StoreUnavailableError: "TEMPORARILY_UNAVAILABLE",
};

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts"))
    .map((entry) => path.relative(ROOT, path.join(entry.parentPath, entry.name)));
}

/** functions/ and every source it imports by a relative path, transitively. */
function handlerReachable(): string[] {
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(path.join(ROOT, file), "utf8");
    for (const match of text.matchAll(/(?:from|import\()\s*"(\.{1,2}\/[^"]+\.ts)"/g)) {
      visit(path.relative(ROOT, path.resolve(path.dirname(path.join(ROOT, file)), match[1]!)));
    }
  };
  for (const file of sourceFiles("functions")) visit(file);
  return [...seen].sort();
}

interface ErrorClass {
  readonly parent: string;
  /** The code the class sets, if it sets one literally. */
  readonly code?: string;
}

/** Every class of shared/ and functions/ that extends another, with the `errorCode` it sets. */
function errorClasses(): Map<string, ErrorClass> {
  const classes = new Map<string, ErrorClass>();
  for (const file of [...sourceFiles("shared"), ...sourceFiles("functions")]) {
    const text = readFileSync(path.join(ROOT, file), "utf8");
    const starts = [...text.matchAll(/class (\w+) extends (\w+)/g)];
    starts.forEach((start, i) => {
      const body = text.slice(start.index, starts[i + 1]?.index ?? text.length);
      // A code chosen in the constructor (`this.errorCode = …`) is the class's own, whichever it is.
      const code = body.includes("this.errorCode =")
        ? "SET_IN_CONSTRUCTOR"
        : /errorCode(?:: string)? = ["`]([A-Z0-9_.${}]+)["`]/.exec(body)?.[1];
      classes.set(start[1]!, { parent: start[2]!, ...(code ? { code } : {}) });
    });
  }
  return classes;
}

/** The code a thrown class answers with; `undefined` when it is not a `CodedError` at all. */
function codeOf(name: string, classes: Map<string, ErrorClass>): string | undefined {
  for (let current: string | undefined = name; current; current = classes.get(current)?.parent) {
    if (MAPPED_BY_CLASS[current]) return MAPPED_BY_CLASS[current];
    if (current === "CodedError") return "INTERNAL_ERROR";
    const code = classes.get(current)?.code;
    if (code) return code;
  }
  return undefined;
}

describe("throw sites a handler can reach", () => {
  const classes = errorClasses();
  const faults: Record<string, Record<string, number>> = {};
  for (const file of handlerReachable()) {
    const text = readFileSync(path.join(ROOT, file), "utf8");
    for (const [, name] of text.matchAll(/throw new (\w+)\(/g)) {
      const code = codeOf(name!, classes);
      if (code !== undefined && code !== "INTERNAL_ERROR") continue;
      (faults[file] ??= {})[name!] = (faults[file]?.[name!] ?? 0) + 1;
    }
  }

  it("finds the handlers' code and its error classes", () => {
    expect(handlerReachable()).toContain("shared/delta/index.ts");
    expect(codeOf("PipelineNotFoundError", classes)).toBe("RESOURCE_DOES_NOT_EXIST");
    expect(codeOf("InvalidParameterError", classes)).toBe("INVALID_PARAMETER_VALUE");
    expect(codeOf("StoreConfigurationError", classes)).toBe("INTERNAL_ERROR");
    expect(codeOf("Error", classes)).toBeUndefined();
    expect(codeOf("StoreUnavailableError", classes)).toBe("TEMPORARILY_UNAVAILABLE");
    expect(codeOf("CorruptLogError", classes)).toBe("DELTA_LOG_CORRUPT");
  });

  it("answers every user-fixable failure with its own code: INTERNAL_ERROR only at the listed server faults", () => {
    expect(faults).toEqual(SERVER_FAULTS);
  });
});
