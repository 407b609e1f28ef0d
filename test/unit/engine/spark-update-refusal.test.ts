import { describe, expect, it } from "vitest";
import { tablePropertiesError } from "../../../shared/delta/index.ts";
import { DatasetCatalog } from "../../../shared/engine/dataset-catalog.ts";
import { FlowNotSupportedOnSparkError } from "../../../shared/engine/spark/errors.ts";
import { firstRefusedBySpark } from "../../../shared/engine/spark/update-refusal.ts";
import { MemoryObjectStore } from "../../../shared/object-store/memory-object-store.ts";
import { SqlReferenceParser } from "../../../shared/pipeline/sql-references.ts";
import { validatePipeline } from "../../../shared/pipeline/validate-pipeline.ts";

/** A pipeline of one auto_loader flow reading `format` files with the declared `schema`. */
const pipeline = (engine: string, format: string, schema: Record<string, string>) => ({
  name: "p",
  catalog: "c",
  schema: "s",
  configuration: { "pipelines.engine": engine },
  datasets: [
    {
      type: "streaming_table",
      name: "raw",
      flows: [
        {
          name: "ingest",
          source: { type: "auto_loader", path: "s3://landing/in/", format, schema },
          sql: "SELECT id, tags FROM source",
        },
      ],
    },
  ],
});

describe("an update on Spark is refused at its start for a source column the job cannot read", () => {
  it("names the flow, the column, its type and the way out; takes a list from JSON; lets auto run it on DuckDB", async () => {
    const parser = await SqlReferenceParser.open();
    try {
      const refusal = async (engine: string, format: string) => {
        const validated = await validatePipeline(
          pipeline(engine, format, { id: "BIGINT", tags: "VARCHAR[]" }),
          parser,
          tablePropertiesError,
        );
        const catalog = new DatasetCatalog(validated, new MemoryObjectStore());
        return firstRefusedBySpark(catalog, { run: ["raw"] }, undefined);
      };
      expect(await refusal("spark", "json")).toBeUndefined();
      expect(await refusal("auto", "csv")).toBeUndefined();
      const refused = await refusal("spark", "csv");
      expect(refused).toMatchObject({ flow: "ingest", kind: "flow" });
      const error = new FlowNotSupportedOnSparkError(
        refused!.flow,
        refused!.reason,
        refused!.kind,
        refused!.wayOut,
      );
      expect(error.errorCode).toBe("FLOW_NOT_SUPPORTED_ON_SPARK");
      expect(error.message).toBe(
        'flow "ingest" cannot run on Spark: its source\'s column tags is declared VARCHAR[], and Spark reads no list from a CSV file; run it on DuckDB (pipelines.engine = "duckdb" or "auto", or start the update with engine "duckdb"), or declare tags as VARCHAR and split it in the flow\'s SQL',
      );
    } finally {
      parser.close();
    }
  });
});
