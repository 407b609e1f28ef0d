import { describe, expect, it } from "vitest";
import { readPipelineProject } from "../../../shared/project/index.ts";
import { inlineProject } from "./project-files.ts";

/**
 * Pipeline SQL as SDP and Lakeflow document it, statement by statement, into Ebb's datasets. Each
 * case is one file of a project; the expected value is the part of the definition it must produce.
 */

function datasets(sql: string) {
  return readPipelineProject(inlineProject({ "transformations/a.sql": sql })).definition.datasets;
}

const LANDING = "s3://landing-bucket/orders";
const FILES = `STREAM read_files('\${landing}', format => 'json', schema => 'id BIGINT, amount DOUBLE, region STRING, ts TIMESTAMP')`;
const RAW = `CREATE STREAMING TABLE raw AS SELECT * FROM ${FILES};`;
const AUTO_LOADER = {
  type: "auto_loader",
  path: LANDING,
  format: "json",
  schema: { id: "BIGINT", amount: "DOUBLE", region: "VARCHAR", ts: "TIMESTAMPTZ" },
};

describe("pipeline SQL into Ebb's datasets", () => {
  it("CREATE STREAMING TABLE over read_files is an auto_loader flow named after the table", () => {
    expect(datasets(RAW)).toEqual([
      {
        type: "streaming_table",
        name: "raw",
        flows: [{ name: "raw", source: AUTO_LOADER, sql: "SELECT * FROM source" }],
      },
    ]);
  });

  it("STREAM json.`path` (Spark SQL's path table, as open-source SDP reads files) is an auto_loader flow", () => {
    expect(datasets("CREATE STREAMING TABLE raw AS SELECT * FROM STREAM json.`${landing}`;")).toEqual([
      {
        type: "streaming_table",
        name: "raw",
        flows: [
          {
            name: "raw",
            source: { type: "auto_loader", path: LANDING, format: "json" },
            sql: "SELECT * FROM source",
          },
        ],
      },
    ]);
  });

  it("STREAM(x), STREAM x and LIVE.x read a streaming table of the project, aliased by its name", () => {
    for (const from of ["STREAM(raw)", "STREAM raw", "STREAM(LIVE.raw)", "STREAM(main.sales.raw)"]) {
      const [, clean] = datasets(
        `${RAW}\nCREATE OR REFRESH STREAMING TABLE clean AS SELECT raw.id FROM ${from} WHERE amount > 0;`,
      );
      expect(clean).toMatchObject({
        flows: [
          {
            name: "clean",
            source: { type: "stream", dataset: "raw" },
            sql: "SELECT raw.id FROM source AS raw WHERE amount > 0",
          },
        ],
      });
    }
  });

  it("an alias after the stream is kept", () => {
    const [, clean] = datasets(`${RAW}\nCREATE STREAMING TABLE clean AS SELECT r.id FROM STREAM(raw) AS r;`);
    expect(clean).toMatchObject({ flows: [{ sql: "SELECT r.id FROM source AS r" }] });
  });

  it("WATERMARK col DELAY OF INTERVAL … is the flow's watermark", () => {
    for (const delay of ["INTERVAL 10 MINUTES", "INTERVAL '10' MINUTES", "INTERVAL '10 minutes'"]) {
      const [, w] = datasets(
        `${RAW}\nCREATE STREAMING TABLE w AS SELECT window(ts, '5 minutes') AS win, count(*) AS n FROM STREAM(raw) WATERMARK ts DELAY OF ${delay} GROUP BY 1;`,
      );
      expect(w).toMatchObject({ flows: [{ watermark: { column: "ts", delay: "10 minutes" } }] });
      expect((w as { flows: { sql: string }[] }).flows[0]!.sql).toContain("FROM source AS raw GROUP BY 1");
    }
  });

  it("a column list casts the query's columns; COMMENT, TBLPROPERTIES and PARTITIONED BY are read", () => {
    const [, t] = datasets(`${RAW}
      CREATE OR REFRESH STREAMING TABLE t (
        id BIGINT NOT NULL COMMENT 'the order',
        region STRING,
        CONSTRAINT positive EXPECT (amount > 0) ON VIOLATION DROP ROW,
        CONSTRAINT known_region EXPECT (region IS NOT NULL),
        CONSTRAINT has_id EXPECT (id IS NOT NULL) ON VIOLATION FAIL UPDATE
      )
      PARTITIONED BY (region)
      COMMENT 'cleaned orders'
      TBLPROPERTIES ('delta.appendOnly' = 'true', delta.logRetentionDuration = 'interval 7 days')
      AS SELECT id, region FROM STREAM(raw);`);
    expect(t).toEqual({
      type: "streaming_table",
      name: "t",
      partition_by: ["region"],
      properties: { "delta.appendOnly": "true", "delta.logRetentionDuration": "interval 7 days" },
      expectations: [
        { name: "positive", condition: "amount > 0", on_violation: "drop" },
        { name: "known_region", condition: "region IS NOT NULL" },
        { name: "has_id", condition: "id IS NOT NULL", on_violation: "fail" },
      ],
      flows: [
        {
          name: "t",
          source: { type: "stream", dataset: "raw" },
          sql: "SELECT CAST(id AS BIGINT) AS id, CAST(region AS STRING) AS region FROM (SELECT id, region FROM source AS raw) AS declared_columns",
        },
      ],
    });
  });

  it("CREATE MATERIALIZED VIEW and CREATE TEMPORARY VIEW read tables in full, by their bare names", () => {
    expect(
      datasets(`${RAW}
        CREATE TEMPORARY VIEW big AS SELECT * FROM main.sales.raw WHERE amount > 100;
        CREATE OR REFRESH MATERIALIZED VIEW totals AS SELECT r.region, sum(b.amount) AS total FROM big b JOIN LIVE.raw r ON b.id = r.id GROUP BY r.region;`).slice(
        1,
      ),
    ).toEqual([
      { type: "view", name: "big", sql: "SELECT * FROM raw WHERE amount > 100" },
      {
        type: "materialized_view",
        name: "totals",
        sql: "SELECT r.region, sum(b.amount) AS total FROM big b JOIN raw r ON b.id = r.id GROUP BY r.region",
      },
    ]);
  });

  it("several CREATE FLOW … INSERT INTO flows write one streaming table declared without a query", () => {
    const [, all] = datasets(`${RAW}
      CREATE STREAMING TABLE all_orders;
      CREATE FLOW from_raw AS INSERT INTO all_orders BY NAME SELECT id, 'raw' AS origin FROM STREAM(raw);
      CREATE FLOW from_kafka AS INSERT INTO all_orders BY NAME
        SELECT CAST(CAST(value AS STRING) AS BIGINT) AS id, 'kafka' AS origin
        FROM STREAM read_kafka(bootstrapServers => 'broker:9092', subscribe => 'orders', startingOffsets => 'earliest', maxOffsetsPerTrigger => 500);
      CREATE FLOW from_kinesis AS INSERT INTO all_orders BY NAME
        SELECT 1 AS id, 'kinesis' AS origin FROM STREAM read_kinesis(streamName => 'orders', region => 'eu-west-1', initialPosition => 'latest');
      CREATE FLOW from_delta AS INSERT INTO all_orders BY NAME SELECT id, 'delta' AS origin FROM STREAM delta.\`s3://crm-bucket/orders\`;`);
    expect(all).toEqual({
      type: "streaming_table",
      name: "all_orders",
      flows: [
        {
          name: "from_raw",
          source: { type: "stream", dataset: "raw" },
          sql: "SELECT id, 'raw' AS origin FROM source AS raw",
        },
        {
          name: "from_kafka",
          source: {
            type: "kafka",
            bootstrap_servers: "broker:9092",
            topic: "orders",
            starting_offsets: "earliest",
          },
          options: { max_offsets_per_batch: 500 },
          sql: "SELECT CAST(CAST(value AS STRING) AS BIGINT) AS id, 'kafka' AS origin\n        FROM source",
        },
        {
          name: "from_kinesis",
          source: { type: "kinesis", stream: "orders", region: "eu-west-1", starting_position: "LATEST" },
          sql: "SELECT 1 AS id, 'kinesis' AS origin FROM source",
        },
        {
          name: "from_delta",
          source: { type: "delta", path: "s3://crm-bucket/orders" },
          sql: "SELECT id, 'delta' AS origin FROM source",
        },
      ],
    });
  });

  it("AUTO CDC INTO, with every clause, is an auto_cdc flow with Databricks' parameter names", () => {
    const [, t] = datasets(`${RAW}
      CREATE OR REFRESH STREAMING TABLE users;
      CREATE FLOW users_cdc AS AUTO CDC INTO users FROM STREAM(raw)
        KEYS (id, region) IGNORE NULL UPDATES
        APPLY AS DELETE WHEN amount < 0 APPLY AS TRUNCATE WHEN amount = 0
        SEQUENCE BY struct(ts, amount) COLUMNS * EXCEPT (ts) STORED AS SCD TYPE 1;`);
    expect(t).toMatchObject({
      flows: [
        {
          name: "users_cdc",
          source: { type: "stream", dataset: "raw" },
          sql: "SELECT * FROM source",
          auto_cdc: {
            keys: ["id", "region"],
            sequence_by: ["ts", "amount"],
            apply_as_deletes: "amount < 0",
            apply_as_truncates: "amount = 0",
            except_column_list: ["ts"],
            stored_as_scd_type: 1,
            ignore_null_updates: true,
          },
        },
      ],
    });
    const [, h] = datasets(`${RAW}
      CREATE STREAMING TABLE history;
      CREATE FLOW history_cdc AS AUTO CDC INTO history FROM STREAM raw KEYS (id) SEQUENCE BY ts
        COLUMNS id, amount, ts STORED AS SCD TYPE 2 TRACK HISTORY ON * EXCEPT (ts);`);
    expect(h).toMatchObject({
      flows: [
        {
          auto_cdc: {
            keys: ["id"],
            sequence_by: "ts",
            column_list: ["id", "amount", "ts"],
            stored_as_scd_type: 2,
            track_history_except_column_list: ["ts"],
          },
        },
      ],
    });
  });

  it("a temporary view that reads a stream is inlined where it is streamed from, and not published", () => {
    const defined = datasets(`
      CREATE TEMPORARY VIEW eu_orders AS SELECT id, amount FROM ${FILES} WHERE region = 'EU';
      CREATE STREAMING TABLE eu AS SELECT id, amount * 2 AS doubled FROM STREAM(eu_orders);`);
    expect(defined).toEqual([
      {
        type: "streaming_table",
        name: "eu",
        flows: [
          {
            name: "eu",
            source: AUTO_LOADER,
            sql: "SELECT id, amount * 2 AS doubled FROM (SELECT id, amount FROM source WHERE region = 'EU') AS eu_orders",
          },
        ],
      },
    ]);
  });

  it("${name} is replaced from the configuration; --conf values win over the spec's", () => {
    const project = inlineProject({ "transformations/a.sql": RAW });
    const conf = readPipelineProject({ ...project, configuration: { landing: "/tmp/landing" } });
    expect(conf.definition.datasets[0]).toMatchObject({ flows: [{ source: { path: "/tmp/landing" } }] });
    expect(conf.definition.configuration).toEqual({
      landing: "/tmp/landing",
      "pipelines.sqlDialect": "spark",
    });
  });

  it("names are Spark's: case-insensitive, kept in lower case", () => {
    const [raw, clean] = datasets(`CREATE STREAMING TABLE Raw AS SELECT * FROM ${FILES};
      CREATE STREAMING TABLE CLEAN AS SELECT * FROM STREAM(RAW);`);
    expect(raw).toMatchObject({ name: "raw", flows: [{ name: "raw" }] });
    expect(clean).toMatchObject({
      name: "clean",
      flows: [{ source: { dataset: "raw" }, sql: "SELECT * FROM source AS RAW" }],
    });
  });
});
