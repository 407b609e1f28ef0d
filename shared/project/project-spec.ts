import { z } from "zod";
import { parseDocument } from "yaml";
import { PROJECT_ISSUE_CODES, type ProjectIssue } from "./errors.ts";

/**
 * The project spec, `spark-pipeline.yml`, as Spark Declarative Pipelines reads it: `name`,
 * `libraries` (globs of definition files, relative to the spec), `storage`, `catalog`,
 * `database` (or `schema`) and `configuration`. Catalog and schema default as Spark's do
 * (`spark_catalog`, `default`); `storage` is where SDP keeps checkpoints, which Ebb keeps in its own
 * bucket, so it is reported back as ignored.
 */

export const SPEC_FILE_NAMES = ["spark-pipeline.yml", "spark-pipeline.yaml"] as const;
export const DEFAULT_CATALOG = "spark_catalog";
export const DEFAULT_SCHEMA = "default";

const scalar = z.union([z.string(), z.number(), z.boolean()]).transform(String);

const librarySchema = z.strictObject({
  glob: z.strictObject({
    include: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]),
  }),
});

export const projectSpecSchema = z
  .strictObject({
    name: z.string().trim().min(1, { error: "name must not be empty" }),
    libraries: z.array(librarySchema).min(1, { error: "libraries must name at least one glob" }),
    storage: z.string().optional(),
    catalog: z.string().min(1).optional(),
    database: z.string().min(1).optional(),
    schema: z.string().min(1).optional(),
    configuration: z.record(z.string().min(1), scalar).default({}),
  })
  .refine(
    (spec) => spec.database === undefined || spec.schema === undefined || spec.database === spec.schema,
    {
      error: "database and schema are the same setting: give one",
      path: ["schema"],
    },
  );

export interface ProjectSpec {
  readonly name: string;
  /** Globs of definition files, relative to the spec's folder. */
  readonly include: readonly string[];
  readonly storage?: string;
  readonly catalog: string;
  readonly schema: string;
  readonly configuration: Readonly<Record<string, string>>;
}

export type SpecResult =
  | { readonly ok: true; readonly spec: ProjectSpec }
  | { readonly ok: false; readonly issues: readonly ProjectIssue[] };

export function readProjectSpec(file: string, text: string): SpecResult {
  const document = parseDocument(text, { uniqueKeys: true, prettyErrors: false });
  const problem = [...document.errors, ...document.warnings][0];
  if (problem) {
    const position = problem.linePos?.[0] ?? { line: 1, col: 1 };
    return {
      ok: false,
      issues: [
        {
          file,
          line: position.line,
          column: position.col,
          code: PROJECT_ISSUE_CODES.specInvalid,
          message: `not valid YAML: ${problem.message.split("\n", 1)[0]}`,
        },
      ],
    };
  }
  const parsed = projectSpecSchema.safeParse(document.toJS());
  if (!parsed.success) {
    return {
      ok: false,
      issues: parsed.error.issues.map((issue) => {
        const at = positionOf(text, nearestNodeStart(document, issue.path as (string | number)[]));
        const field = issue.path.join(".");
        const missing = issue.input === undefined;
        const message =
          issue.code === "unrecognized_keys"
            ? `${issue.keys.join(", ")} ${issue.keys.length === 1 ? "is not a field" : "are not fields"} of ${field ? field : "spark-pipeline.yml (name, libraries, storage, catalog, database, schema, configuration)"}`
            : missing
              ? `${field} is required`
              : `${field ? `${field}: ` : ""}${issue.message}`;
        return { file, ...at, code: PROJECT_ISSUE_CODES.specInvalid, message };
      }),
    };
  }
  const spec = parsed.data;
  return {
    ok: true,
    spec: {
      name: spec.name,
      include: spec.libraries.flatMap((library) =>
        typeof library.glob.include === "string" ? [library.glob.include] : library.glob.include,
      ),
      ...(spec.storage !== undefined ? { storage: spec.storage } : {}),
      catalog: spec.catalog ?? DEFAULT_CATALOG,
      schema: spec.schema ?? spec.database ?? DEFAULT_SCHEMA,
      configuration: spec.configuration,
    },
  };
}

/** Where the value at `path` starts, or the nearest enclosing value that exists (a missing field's parent). */
function nearestNodeStart(document: ReturnType<typeof parseDocument>, path: (string | number)[]): number {
  for (let length = path.length; length >= 0; length--) {
    const node = document.getIn(path.slice(0, length), true) as { range?: number[] } | undefined;
    if (node?.range) return node.range[0]!;
  }
  return 0;
}

function positionOf(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset).split("\n");
  return { line: before.length, column: before[before.length - 1]!.length + 1 };
}
