import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DefinitionError, type DefinitionIssue } from "../../../shared/pipeline/errors.ts";
import { SqlReferenceParser } from "../../../shared/pipeline/sql-references.ts";
import { tablePropertiesError } from "../../../shared/delta/index.ts";
import { validatePipeline } from "../../../shared/pipeline/validate-pipeline.ts";

let parser: SqlReferenceParser;
beforeAll(async () => {
  parser = await SqlReferenceParser.open();
});
afterAll(() => parser.close());

/** A streaming table `orders` and a materialized view `totals`, with the expectations given. */
function pipeline(table: unknown[], view?: unknown[]) {
  return {
    name: "quality",
    catalog: "main",
    schema: "quality",
    datasets: [
      {
        name: "orders",
        type: "streaming_table",
        expectations: table,
        flows: [
          {
            name: "land",
            source: { type: "delta", path: "s3://bucket/orders/" },
            sql: "SELECT * FROM source",
          },
        ],
      },
      {
        name: "totals",
        type: "materialized_view",
        ...(view ? { expectations: view } : {}),
        sql: "SELECT sum(amount) AS total FROM orders",
      },
    ],
  };
}

async function issues(definition: unknown): Promise<DefinitionIssue[]> {
  try {
    await validatePipeline(definition, parser, tablePropertiesError);
  } catch (error) {
    if (error instanceof DefinitionError) return [...error.issues];
    throw error;
  }
  return [];
}

describe("expectations in a definition", () => {
  it("accepts Databricks' three actions in any case, warn by default", async () => {
    const validated = await validatePipeline(
      pipeline(
        [
          { name: "valid_amount", condition: "amount > 0" },
          { name: "Known_Id", condition: "id IS NOT NULL", on_violation: "DROP" },
        ],
        [{ name: "positive_total", condition: "total >= 0", on_violation: "fail" }],
      ),
      parser,
      tablePropertiesError,
    );
    const [orders, totals] = validated.definition.datasets;
    expect(orders && "expectations" in orders ? orders.expectations : undefined).toEqual([
      { name: "valid_amount", condition: "amount > 0", on_violation: "warn" },
      { name: "Known_Id", condition: "id IS NOT NULL", on_violation: "drop" },
    ]);
    expect(totals && "expectations" in totals ? totals.expectations : undefined).toEqual([
      { name: "positive_total", condition: "total >= 0", on_violation: "fail" },
    ]);
  });

  it("refuses a name used twice in a dataset (case folded), with its own code", async () => {
    const found = await issues(
      pipeline([
        { name: "valid_amount", condition: "amount > 0" },
        { name: "VALID_AMOUNT", condition: "amount < 100" },
      ]),
    );
    expect(found).toEqual([
      {
        path: "datasets[0].expectations[1].name",
        code: "EXPECTATION_NAME_NOT_UNIQUE",
        message: expect.stringContaining(
          'dataset "orders" has two expectations named "VALID_AMOUNT" (expectations[0] and expectations[1])',
        ),
      },
    ]);
    const error = await validatePipeline(
      pipeline([
        { name: "a", condition: "x" },
        { name: "a", condition: "y" },
      ]),
      parser,
      tablePropertiesError,
    ).catch((e: unknown) => e);
    expect(error).toMatchObject({ errorCode: "EXPECTATION_NAME_NOT_UNIQUE" });
  });

  it("refuses a condition that is not one expression over the row, naming the dataset and expectation", async () => {
    for (const condition of [
      "amount >",
      "true) FROM t WHERE (1",
      "id IN (SELECT id FROM other)",
      "1; DROP TABLE t",
    ]) {
      const found = await issues(pipeline([{ name: "valid_amount", condition }]));
      expect(found, condition).toEqual([
        {
          path: "datasets[0].expectations[0].condition",
          code: "EXPECTATION_CONDITION_INVALID",
          message: expect.stringContaining(
            'expectation "valid_amount" of dataset "orders" is not a SQL boolean expression over the dataset\'s columns',
          ),
        },
      ]);
    }
  });

  it("refuses a name that is not an identifier, an empty condition, an unknown action and unknown fields", async () => {
    expect(await issues(pipeline([{ name: "valid amount", condition: "amount > 0" }]))).toEqual([
      expect.objectContaining({
        message: expect.stringContaining('expectation name "valid amount" is not allowed'),
      }),
    ]);
    expect(await issues(pipeline([{ name: "a", condition: "  " }]))).toEqual([
      expect.objectContaining({ message: expect.stringContaining("condition must not be empty") }),
    ]);
    expect(
      await issues(pipeline([{ name: "a", condition: "x > 0", on_violation: "quarantine" }])),
    ).toHaveLength(1);
    expect(await issues(pipeline([{ name: "a", condition: "x > 0", action: "drop" }]))).toEqual([
      expect.objectContaining({ message: expect.stringContaining('unknown field "action"') }),
    ]);
    const view = { name: "recent", type: "view", sql: "SELECT 1", expectations: [] };
    const withView = { ...pipeline([]), datasets: [...pipeline([]).datasets, view] };
    expect(await issues(withView)).toEqual([
      expect.objectContaining({ message: expect.stringContaining('unknown field "expectations"') }),
    ]);
  });
});
