import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqlReferenceParser } from "../../../shared/pipeline/sql-references.ts";
import { tablePropertiesError } from "../../../shared/delta/index.ts";
import { validatePipeline } from "../../../shared/pipeline/validate-pipeline.ts";
import { DefinitionError } from "../../../shared/pipeline/errors.ts";
import { samplePipeline } from "./fixtures.ts";

/**
 * `pipelines.sqlDialect` (README "The SQL dialect"): Spark SQL is translated to DuckDB's once, at
 * validation, and the validated pipeline the engine runs holds DuckDB's; a construct Ebb cannot run
 * is refused there with UNSUPPORTED_SQL, its path, line and column; without the key nothing changes.
 */

let parser: SqlReferenceParser;
beforeAll(async () => {
  parser = await SqlReferenceParser.open();
});
afterAll(() => parser.close());

type Flow = { sql: string; owns?: string };
const flowOf = (definition: ReturnType<typeof samplePipeline>, dataset: number) =>
  (definition.datasets[dataset] as { flows: Flow[] }).flows[0]!;

function sparkPipeline(change: (definition: ReturnType<typeof samplePipeline>) => void = () => {}) {
  const definition = samplePipeline();
  definition["configuration"] = { "pipelines.rewind.enabled": "true", "pipelines.sqlDialect": "spark" };
  change(definition);
  return definition;
}

describe("the pipeline's SQL dialect", () => {
  it("translates a Spark pipeline's SQL to the DuckDB SQL the engine runs, once at validation", async () => {
    const pipeline = await validatePipeline(
      sparkPipeline((d) => {
        flowOf(d, 0).sql = "SELECT *, get_json_object(payload, '$.a') AS a, tags[0] AS first_tag FROM source";
        flowOf(d, 2).owns = "substring_index(region, '-', 1) = 'eu'";
      }),
      parser,
      tablePropertiesError,
    );
    expect(pipeline.settings.sqlDialect).toBe("spark");
    const flows = pipeline.definition.datasets.flatMap((dataset) =>
      dataset.type === "streaming_table" ? dataset.flows : [],
    );
    // Spark's 0-based subscript, an error past the end (ANSI).
    expect(flows[0]!.sql).toMatch(
      /^SELECT \*, \(JSON_EXTRACT_STRING\(TRY_CAST\(payload AS JSON\), '\$\.a'\)\) AS a, \(CASE .*\[INVALID_ARRAY_INDEX\].* ELSE \(tags\)\[\(0\) \+ 1\] END\) AS first_tag FROM source$/,
    );
    expect(flows[2]!.owns).toMatch(/^\(CASE WHEN 1 = 0 OR '-' = '' THEN '' .* = 'eu'$/);
    // The DAG still comes from the translated SQL's table references.
    expect(pipeline.graph.levels.flat()).toContain("daily_totals");
  });

  it("runs the SQL as written when the key is absent (DuckDB's dialect)", async () => {
    const definition = samplePipeline();
    flowOf(definition, 0).sql = "SELECT *, [1, 2][1] AS one FROM source";
    const pipeline = await validatePipeline(definition, parser, tablePropertiesError);
    expect(pipeline.settings.sqlDialect).toBe("duckdb");
    expect(flowOf(pipeline.definition as never, 0).sql).toBe("SELECT *, [1, 2][1] AS one FROM source");
  });

  it("refuses a Spark construct Ebb cannot run with UNSUPPORTED_SQL, naming its path, line and column", async () => {
    const definition = sparkPipeline((d) => {
      flowOf(d, 1).sql = "SELECT id,\n  crc32(amount) AS amount\nFROM source";
    });
    const error = await validatePipeline(definition, parser, tablePropertiesError).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(DefinitionError);
    expect((error as DefinitionError).errorCode).toBe("UNSUPPORTED_SQL");
    expect((error as DefinitionError).issues).toEqual([
      {
        path: "datasets[1].flows[0].sql",
        code: "UNSUPPORTED_SQL",
        message: expect.stringMatching(
          /^SQL of flow "ingest_customers", line 2, column 3: function crc32 is not a Spark function Ebb runs/,
        ),
      },
    ]);
  });

  it("refuses a dialect it does not know", async () => {
    const definition = samplePipeline();
    definition["configuration"] = { "pipelines.sqlDialect": "postgres" };
    const error = (await validatePipeline(definition, parser, tablePropertiesError).catch(
      (caught: unknown) => caught,
    )) as DefinitionError;
    expect(error.issues).toEqual([
      {
        path: 'configuration["pipelines.sqlDialect"]',
        message: expect.stringMatching(/^must be "spark" .* or "duckdb" .*, not "postgres"$/),
      },
    ]);
  });
});
