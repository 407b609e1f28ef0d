import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  columnTypeProblem,
  parseColumnType,
  renderColumnType,
  type ColumnType,
} from "../../../shared/pipeline/column-type.ts";
import { hasControlCharacter } from "../../../shared/pipeline/control-characters.ts";
import { DefinitionError } from "../../../shared/pipeline/errors.ts";
import { parseDefinition } from "../../../shared/pipeline/parse-definition.ts";
import { samplePipeline } from "./fixtures.ts";

let duck: DuckDBInstance;
let connection: DuckDBConnection;
beforeAll(async () => {
  duck = await DuckDBInstance.create(":memory:", { threads: "1" });
  connection = await duck.connect();
});
afterAll(() => {
  connection.closeSync();
  duck.closeSync();
});

/** DuckDB's own name for a type (`typeof`), or its error. */
async function duckTypeOf(sql: string): Promise<string> {
  const reader = await connection.runAndReadAll(`SELECT typeof(CAST(NULL AS ${sql})) AS t`);
  return String(reader.getRowObjectsJS()[0]?.["t"]);
}

/** The review's type-injection value: closes the CAST, adds a COPY and re-opens a CASE. */
const INJECTION =
  "BIGINT) IS NULL THEN NULL END AS e0 FROM (SELECT 1 AS id); COPY (SELECT 1) TO '/tmp/ebb-pwned.csv'; SELECT CASE WHEN (NULL::BIGINT";

describe("declared column types", () => {
  it.each([
    ["BIGINT", "BIGINT"],
    ["int", "INTEGER"],
    ["double precision", "DOUBLE"],
    ["TIMESTAMP WITH TIME ZONE", "TIMESTAMP WITH TIME ZONE"],
    ["character varying", "VARCHAR"],
    ["varchar(10)", "VARCHAR"],
    ["DECIMAL(10)", "DECIMAL(10,0)"],
    ["numeric(38, 2)", "DECIMAL(38,2)"],
    ["decimal", "DECIMAL(18,3)"],
    ["INT[]", "INTEGER[]"],
    ["int[3]", "INTEGER[3]"],
    ['STRUCT(a INT, "b c" VARCHAR)', 'STRUCT(a INTEGER, "b c" VARCHAR)'],
    ["MAP(VARCHAR, BIGINT[])", "MAP(VARCHAR, BIGINT[])"],
    ["UNION(n INT, s TEXT)", "UNION(n INTEGER, s VARCHAR)"],
    ["json", "JSON"],
  ])("%s is a type, rendered as DuckDB reads it (%s)", async (text, duckName) => {
    expect(await duckTypeOf(renderColumnType(parseColumnType(text)))).toBe(duckName);
    expect(await duckTypeOf(text)).toBe(duckName);
  });

  it.each([
    INJECTION,
    "BIGINT)",
    "BIGINT; DROP TABLE x",
    "VARCHAR -- comment",
    "BIGINT /* hidden */",
    "ENUM('a')",
    "INT[-1]",
    "DECIMAL(39, 2)",
    "DECIMAL(5, 6)",
    "STRUCT(a INT, a INT)",
    'STRUCT("a\u0000" INT)',
    "TYPE",
    "NOT_A_TYPE",
    "MAP(INT)",
    "",
    "LIST(INT)",
  ])("%j is refused", (text) => {
    expect(columnTypeProblem(text)).toBeDefined();
  });

  it("a definition with a type injection is refused at create, naming the field's path", () => {
    const definition = samplePipeline();
    const flow = (definition.datasets[0] as { flows: Record<string, unknown>[] }).flows[0]!;
    flow["source"] = {
      type: "auto_loader",
      path: "s3://landing-bucket/orders/",
      format: "json",
      schema: { id: "BIGINT", e0: INJECTION },
    };
    let error: unknown;
    try {
      parseDefinition(definition);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(DefinitionError);
    expect((error as DefinitionError).issues).toEqual([
      expect.objectContaining({
        path: "datasets[0].flows[0].source.schema.e0",
        message: expect.stringContaining("is not a column type"),
      }),
    ]);
  });

  const scalar = fc.constantFrom(
    "BIGINT",
    "INTEGER",
    "DOUBLE",
    "VARCHAR",
    "BOOLEAN",
    "DATE",
    "TIMESTAMPTZ",
    "BLOB",
    "UUID",
  );
  const fieldName = fc.oneof(
    fc.constantFrom("a", "b_1", "Col"),
    fc.string({ minLength: 1, maxLength: 6 }).filter((s) => !hasControlCharacter(s)),
  );
  const { type: columnType } = fc.letrec<{ type: ColumnType }>((tie) => ({
    type: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      scalar.map((name): ColumnType => ({ kind: "scalar", name })),
      fc
        .tuple(fc.integer({ min: 1, max: 38 }), fc.integer({ min: 0, max: 38 }))
        .filter(([p, s]) => s <= p)
        .map(([precision, scale]): ColumnType => ({ kind: "decimal", precision, scale })),
      tie("type").map((element): ColumnType => ({ kind: "list", element })),
      fc
        .uniqueArray(fc.tuple(fieldName, tie("type")), {
          minLength: 1,
          maxLength: 3,
          selector: ([n]) => n.toLowerCase(),
        })
        .map((fields): ColumnType => ({ kind: "struct", fields })),
      fc
        .tuple(scalar, tie("type"))
        .map(([key, value]): ColumnType => ({ kind: "map", key: { kind: "scalar", name: key }, value })),
    ),
  }));

  it("every rendered type parses back to itself and DuckDB accepts it", async () => {
    await fc.assert(
      fc.asyncProperty(columnType, async (type) => {
        const sql = renderColumnType(type);
        expect(parseColumnType(sql)).toEqual(type);
        await duckTypeOf(sql);
      }),
      { numRuns: 200 },
    );
  });

  it("any text the parser accepts is one DuckDB type and nothing else", async () => {
    const pieces = fc.constantFrom(
      "INT",
      "VARCHAR",
      "(",
      ")",
      ",",
      "[",
      "]",
      "3",
      "STRUCT",
      "MAP",
      "a",
      '"x"',
      ";",
      "'",
      "--",
      " ",
    );
    await fc.assert(
      fc.asyncProperty(fc.array(pieces, { maxLength: 10 }), async (parts) => {
        const text = parts.join(" ");
        if (columnTypeProblem(text) !== undefined) return;
        await duckTypeOf(renderColumnType(parseColumnType(text)));
      }),
      { numRuns: 300 },
    );
  });
});
