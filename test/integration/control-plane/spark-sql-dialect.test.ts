import { mkdir } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EbbApiError } from "../../../shared/client/ebb-client.ts";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * A pipeline written in Spark SQL (`pipelines.sqlDialect: spark`) through the HTTP API on the local
 * runtime: its flow and its materialized view use Spark's functions and semantics (JSON paths, a
 * 0-based subscript, an ANSI cast, a datetime pattern, substring_index, concat's NULL) and the tables
 * hold Spark's answers; a function Ebb does not run is refused when the pipeline is created, with
 * UNSUPPORTED_SQL, the SQL's path, line and column.
 */

const FLOW_SQL = `SELECT id,
  get_json_object(payload, '$.user.name') AS user_name,
  split(tags, ',')[0] AS first_tag,
  CAST(amount AS INT) AS amount,
  date_format(to_timestamp(at, 'dd/MM/yyyy HH:mm'), 'yyyy-MM') AS month,
  concat(note, '!') AS note
FROM source`;

const VIEW_SQL = `SELECT substring_index(user_name, ' ', 1) AS first_name, sum(amount) AS total
FROM raw GROUP BY substring_index(user_name, ' ', 1)`;

const definition = (landing: string, flowSql = FLOW_SQL) => ({
  datasets: [
    {
      type: "streaming_table",
      name: "raw",
      flows: [
        {
          name: "ingest",
          source: {
            type: "auto_loader",
            path: landing,
            format: "json",
            schema: {
              id: "BIGINT",
              payload: "VARCHAR",
              tags: "VARCHAR",
              amount: "VARCHAR",
              at: "VARCHAR",
              note: "VARCHAR",
            },
          },
          sql: flowSql,
        },
      ],
    },
    { type: "materialized_view", name: "by_first_name", sql: VIEW_SQL },
  ],
});

describe("a pipeline written in Spark SQL", () => {
  let cp: TestControlPlane;
  beforeAll(async () => {
    cp = await startTestControlPlane();
  });
  afterAll(() => cp?.close());

  it("runs with Spark's answers", async () => {
    const folder = `${cp.landing}/spark-dialect`;
    await mkdir(folder, { recursive: true });
    await cp.land("spark-dialect/001.json", [
      {
        id: 1,
        payload: '{"user":{"name":"Ada Lovelace"}}',
        tags: "a,b",
        amount: "12",
        at: "04/07/2024 10:20",
        note: "x",
      },
      {
        id: 2,
        payload: '{"user":{"name":"Ada Byron"}}',
        tags: "c",
        amount: "5",
        at: "31/12/2023 23:59",
        note: null,
      },
    ]);
    const { pipeline_id: pipelineId } = await cp.client.createPipeline({
      name: "spark-dialect",
      catalog: "dialect",
      schema: "spark",
      configuration: { "pipelines.sqlDialect": "spark" },
      definition: definition(folder),
    });
    const { update_id } = await cp.client.startUpdate(pipelineId);
    const update = await cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
    expect(update.state, update.error?.message).toBe("COMPLETED");

    const raw = await cp.client.query("dialect.spark.raw", {
      sql: "SELECT id, user_name, first_tag, amount, month, note FROM t ORDER BY id",
    });
    expect(raw.rows).toEqual([
      { id: 1, user_name: "Ada Lovelace", first_tag: "a", amount: 12, month: "2024-07", note: "x!" },
      { id: 2, user_name: "Ada Byron", first_tag: "c", amount: 5, month: "2023-12", note: null },
    ]);
    const view = await cp.client.query("dialect.spark.by_first_name", {
      sql: "SELECT first_name, total FROM t",
    });
    expect(view.rows).toEqual([{ first_name: "Ada", total: 17 }]);

    // A table query over a table this pipeline owns is Spark SQL too: Spark's functions and datetime
    // patterns, a 0-based subscript, with Delta's time travel beside them.
    const history = await cp.client.history("dialect.spark.raw");
    const first = Math.min(...history.history.map((entry) => Number(entry["version"])));
    const spark = await cp.client.query("dialect.spark.raw", {
      sql: `SELECT id,
  date_format(to_timestamp(concat(month, '-15'), 'yyyy-MM-dd'), 'dd/MM/yyyy') AS day,
  get_json_object(concat('{"n":"', user_name, '"}'), '$.n') AS name,
  split(user_name, ' ')[1] AS last_name
FROM t VERSION AS OF ${Number(history.history[0]!["version"])} ORDER BY id`,
    });
    expect(spark.rows).toEqual([
      { id: 1, day: "15/07/2024", name: "Ada Lovelace", last_name: "Lovelace" },
      { id: 2, day: "15/12/2023", name: "Ada Byron", last_name: "Byron" },
    ]);
    const before = await cp.client.query("dialect.spark.raw", {
      sql: `SELECT count(*) AS n FROM raw@v${first}`,
    });
    expect(before.rows).toEqual([{ n: 0 }]);
    const refusedQuery = await cp.client
      .query("dialect.spark.raw", { sql: "SELECT crc32(note) FROM t" })
      .catch((error: unknown) => error);
    expect(refusedQuery).toBeInstanceOf(EbbApiError);
    expect((refusedQuery as EbbApiError).status).toBe(400);
    expect((refusedQuery as EbbApiError).errorCode).toBe("UNSUPPORTED_SQL");
    expect((refusedQuery as EbbApiError).message).toMatch(/the table query .*crc32/);
    const unparsed = await cp.client
      .query("dialect.spark.raw", { sql: "SELECT * FROM t WHERE" })
      .catch((error: unknown) => error);
    expect(unparsed).toMatchObject({ status: 400, errorCode: "UNSUPPORTED_SQL" });
    expect((unparsed as EbbApiError).message).toMatch(/line 1, column 22: the table query .*does not parse/);

    // The onset predicate over a table this pipeline owns is Spark SQL too (nvl is not DuckDB's).
    const onset = await cp.client.onset("dialect.spark.raw", { predicate: "nvl(note, 'none') = 'none'" });
    expect(onset).toMatchObject({ found: true, pipeline_id: pipelineId });
    const refused = await cp.client
      .onset("dialect.spark.raw", { predicate: "crc32(id) = 1" })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(EbbApiError);
    expect((refused as EbbApiError).errorCode).toBe("UNSUPPORTED_SQL");
    expect((refused as EbbApiError).message).toMatch(/line 1, column 1: the onset predicate .*crc32/);
  });

  it("refuses a function Ebb does not run when the pipeline is created, naming where it is", async () => {
    const refused = await cp.client
      .createPipeline({
        name: "spark-dialect-refused",
        catalog: "dialect",
        schema: "refused",
        configuration: { "pipelines.sqlDialect": "spark" },
        definition: definition(cp.landing, "SELECT id,\n  crc32(amount) AS amount FROM source"),
      })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(EbbApiError);
    expect((refused as EbbApiError).errorCode).toBe("UNSUPPORTED_SQL");
    expect((refused as EbbApiError).message).toMatch(
      /datasets\[0\]\.flows\[0\]\.sql.*line 2, column 3: function crc32 is not a Spark function Ebb runs/,
    );
  });

  it("keeps DuckDB SQL in a table query over a DuckDB pipeline's table", async () => {
    await mkdir(`${cp.landing}/duckdb-dialect`, { recursive: true });
    await cp.land("duckdb-dialect/001.json", [{ id: 1, payload: '{"user":{"name":"Ada"}}' }]);
    const { pipeline_id: pipelineId } = await cp.client.createPipeline({
      name: "duckdb-dialect",
      catalog: "dialect",
      schema: "duckdb",
      definition: {
        datasets: [
          {
            type: "streaming_table",
            name: "raw",
            flows: [
              {
                name: "ingest",
                source: {
                  type: "auto_loader",
                  path: `${cp.landing}/duckdb-dialect`,
                  format: "json",
                  schema: { id: "BIGINT", payload: "VARCHAR" },
                },
                sql: "SELECT id, payload FROM source",
              },
            ],
          },
        ],
      },
    });
    const { update_id } = await cp.client.startUpdate(pipelineId);
    const update = await cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
    expect(update.state, update.error?.message).toBe("COMPLETED");
    // json_extract_string and strftime are DuckDB's (Spark's translation refuses both); [1] is 1-based.
    const duck = await cp.client.query("dialect.duckdb.raw", {
      sql: `SELECT json_extract_string(payload, '$.user.name') AS name,
  strftime(DATE '2024-07-15', '%d/%m/%Y') AS day, [10, 20][1] AS first FROM t`,
    });
    expect(duck.rows).toEqual([{ name: "Ada", day: "15/07/2024", first: 10 }]);
  });

  /** A Spark-dialect pipeline whose table `raw` has one expectation with `condition`. */
  const withExpectation = (schema: string, landing: string, condition: string) => ({
    name: `spark-dialect-${schema}`,
    catalog: "dialect",
    schema,
    configuration: { "pipelines.sqlDialect": "spark" },
    definition: {
      datasets: [
        {
          type: "streaming_table",
          name: "raw",
          expectations: [{ name: "has_amount", condition }],
          flows: [
            {
              name: "ingest",
              source: {
                type: "auto_loader",
                path: landing,
                format: "json",
                schema: { id: "BIGINT", amount: "BIGINT" },
              },
              sql: "SELECT id, amount FROM source",
            },
          ],
        },
      ],
    },
  });

  it("runs an expectation's condition in Spark SQL (nvl is Spark's, not DuckDB's)", async () => {
    await mkdir(`${cp.landing}/spark-expect`, { recursive: true });
    await cp.land("spark-expect/001.json", [
      { id: 1, amount: 5 },
      { id: 2, amount: null },
      { id: 3, amount: -1 },
    ]);
    const { pipeline_id: pipelineId } = await cp.client.createPipeline(
      withExpectation("expect", `${cp.landing}/spark-expect`, "nvl(amount, 0) > 0"),
    );
    const { update_id } = await cp.client.startUpdate(pipelineId);
    const update = await cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
    expect(update.state, update.error?.message).toBe("COMPLETED");
    const events = await cp.client.events(pipelineId, {
      filter: `event_type = 'flow_progress'`,
      max_results: 100,
    });
    const counts = events.events
      .map(
        (event) =>
          (event.details as { flow_progress?: { data_quality?: { expectations?: unknown } } }).flow_progress,
      )
      .flatMap((progress) => progress?.data_quality?.expectations ?? []);
    expect(counts).toEqual([{ name: "has_amount", dataset: "raw", passed_records: 1, failed_records: 2 }]);
  });

  it("refuses an expectation's condition Ebb does not run, naming the expectation", async () => {
    const refused = await cp.client
      .createPipeline(withExpectation("expect_refused", cp.landing, "crc32(amount) = 1"))
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(EbbApiError);
    expect((refused as EbbApiError).errorCode).toBe("UNSUPPORTED_SQL");
    expect((refused as EbbApiError).message).toMatch(
      /datasets\[0\]\.expectations\[0\]\.condition: condition of expectation "has_amount" of dataset "raw", line 1, column 1: function crc32 is not a Spark function/,
    );
  });
});
