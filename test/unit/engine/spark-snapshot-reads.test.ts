import { describe, expect, it } from "vitest";
import type { Snapshot } from "../../../shared/delta/index.ts";
import type { DatasetCatalog, SnapshotRead } from "../../../shared/engine/dataset-catalog.ts";
import { FlowNotSupportedOnSparkError } from "../../../shared/engine/spark/errors.ts";
import type { SparkJobs } from "../../../shared/engine/spark/spark-jobs.ts";
import { planSparkReads } from "../../../shared/engine/spark/spark-snapshot-reads.ts";

const catalog = { tablePrefix: (name: string) => `tables/p/${name}/` } as unknown as DatasetCatalog;
const spark = { bucketUri: (key: string) => `s3://bucket/${key}` } as unknown as SparkJobs;
const schemaString = JSON.stringify({ type: "struct", fields: [] });
const snapshot = (version: number, timestamp: number, files: Record<string, object>): Snapshot =>
  ({
    version,
    timestamp,
    metadata: { schemaString, partitionColumns: ["day"] },
    files: new Map(
      Object.entries(files).map(([path, extra]) => [
        path,
        { path, partitionValues: { day: "1" }, size: 1, ...extra },
      ]),
    ),
  }) as unknown as Snapshot;
const reads = [
  { kind: "table", name: "dims", store: {} },
  { kind: "view", name: "big", sql: "SELECT * FROM dims" },
] as unknown as SnapshotRead[];

describe("the files a Spark job reads for a snapshot read", () => {
  it("are the live files of the version Ebb loaded, as URIs under the table, views as their SQL", async () => {
    const planned = await planSparkReads(
      catalog,
      spark,
      reads,
      "enrich",
      new Map([["dims", snapshot(4, 1_000, { "day=1/b.parquet": {}, "day=1/a%25x.parquet": {} })]]),
    );
    expect(planned.newest).toBe(1_000);
    expect(planned.reads).toEqual([
      {
        kind: "table",
        name: "dims",
        schemaString,
        partitionColumns: ["day"],
        files: [
          { uri: "s3://bucket/tables/p/dims/day=1/a%x.parquet", partitionValues: { day: "1" } },
          { uri: "s3://bucket/tables/p/dims/day=1/b.parquet", partitionValues: { day: "1" } },
        ],
      },
      { kind: "view", name: "big", sql: "SELECT * FROM dims" },
    ]);
  });

  it("refuse a table with deletion vectors by name", async () => {
    const dv = { deletionVector: { storageType: "u", pathOrInlineDv: "x", sizeInBytes: 1, cardinality: 1 } };
    const refusal = planSparkReads(
      catalog,
      spark,
      reads,
      "enrich",
      new Map([["dims", snapshot(2, 5, { "day=1/a.parquet": dv })]]),
    );
    await expect(refusal).rejects.toBeInstanceOf(FlowNotSupportedOnSparkError);
    await expect(refusal).rejects.toThrow(/table dims \(version 2\) has data files with deletion vectors/);
  });
});
