import { beforeAll, describe, expect, it } from "vitest";
import { SqlReferenceParser } from "../../../shared/pipeline/sql-references.ts";
import { validatePipeline, type ValidatedPipeline } from "../../../shared/pipeline/validate-pipeline.ts";
import { flowsOf, selectByName } from "../../../shared/pipeline/selection.ts";
import { UnknownSelectionError } from "../../../shared/pipeline/errors.ts";
import { samplePipeline } from "./fixtures.ts";
import { tablePropertiesError } from "../../../shared/delta/index.ts";

let pipeline: ValidatedPipeline;
beforeAll(async () => {
  const parser = await SqlReferenceParser.open();
  const definition = samplePipeline();
  (definition.datasets[2] as { flows: Record<string, unknown>[] }).flows.push({
    name: "orders",
    source: { type: "stream", dataset: "raw_orders" },
    sql: "SELECT * FROM source",
  });
  pipeline = await validatePipeline(definition, parser, tablePropertiesError);
  parser.close();
});

describe("selectByName", () => {
  it("selects everything when no names are given", () => {
    expect(selectByName(pipeline)).toEqual({
      datasets: ["raw_orders", "customers", "orders", "daily_totals", "recent"],
      flows: flowsOf(pipeline),
    });
    expect(selectByName(pipeline, []).datasets).toHaveLength(5);
  });

  it("selects a dataset with all its flows, whatever the case or qualification", () => {
    expect(selectByName(pipeline, ["MAIN.SALES.ORDERS", "Daily_Totals"])).toEqual({
      datasets: ["orders", "daily_totals"],
      flows: [
        { flow: "clean_orders", dataset: "orders" },
        { flow: "orders", dataset: "orders" },
      ],
    });
  });

  it("selects a flow on its own without its dataset's other flows", () => {
    expect(selectByName(pipeline, ["Clean_Orders", " sales.raw_orders "])).toEqual({
      datasets: ["raw_orders"],
      flows: [
        { flow: "ingest_orders", dataset: "raw_orders" },
        { flow: "clean_orders", dataset: "orders" },
      ],
    });
  });

  it("fails on every unknown name at once, listing what exists", () => {
    let caught: unknown;
    try {
      selectByName(pipeline, ["orders", "nope", "other.sales.orders"]);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(UnknownSelectionError);
    const error = caught as UnknownSelectionError;
    expect(error.unknownNames).toEqual(["nope", "other.sales.orders"]);
    expect(error.errorCode).toBe("INVALID_PARAMETER_VALUE");
    expect(error.message).toBe(
      'selection names "nope", "other.sales.orders", which are not a dataset or flow of this pipeline; known: raw_orders, customers, orders, daily_totals, recent, ingest_orders, ingest_customers, clean_orders',
    );
  });
});
