import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../support/control-plane.ts";
import { startTestKafka, type TestKafka } from "../support/kafka.ts";
import { twinPipelines } from "./twin-pipelines.ts";
import { sparkEngineReady } from "./spark-engine-ready.ts";

/**
 * A `kafka` source on the Spark engine, against the real Apache Kafka broker the suites start: twin
 * pipelines read one topic of several partitions, one every batch on DuckDB, the other each update on
 * an engine fast-check picks, through produced batches, rewinds (also across an engine switch) and
 * replays. After each update both tables hold the same rows with every column the DuckDB path gives
 * the flow's SQL (key, the declared value struct, topic, partition, offset, timestamp, headers), and
 * every produced record exactly once: none skipped, none doubled.
 */

const TOPIC = "spark_orders";
const PARTITIONS = 3;
const CATALOG = "spark_kafka";

type Engine = "duckdb" | "spark";
type Step =
  | { kind: "produce"; records: readonly { partition: number; cents: number }[] }
  | { kind: "update"; engine: Engine }
  | { kind: "rewind"; back: number; engine: Engine };

const engine = fc.constantFrom<Engine>("duckdb", "spark");
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant("produce" as const),
    records: fc.array(
      fc.record({ partition: fc.nat(PARTITIONS - 1), cents: fc.integer({ min: -500, max: 50_000 }) }),
      { minLength: 1, maxLength: 12 },
    ),
  }),
  fc.record({ kind: fc.constant("update" as const), engine }),
  fc.record({ kind: fc.constant("rewind" as const), back: fc.integer({ min: 1, max: 3 }), engine }),
);

describe.skipIf(!sparkEngineReady)("a kafka source on the Spark engine", () => {
  let cp: TestControlPlane;
  let kafka: TestKafka;
  let produced = 0;
  const twins = twinPipelines(() => cp);
  beforeAll(async () => {
    [cp, kafka] = await Promise.all([startTestControlPlane(), startTestKafka()]);
    await kafka.createTopic(TOPIC, PARTITIONS);
  }, 600_000);
  afterAll(async () => {
    await cp?.close();
    await kafka?.stop();
  });

  const settings = (schema: string, engine: Engine) => ({
    name: `kafka orders ${schema}`,
    catalog: CATALOG,
    schema,
    configuration: { "pipelines.rewind.enabled": "true", "pipelines.engine": engine },
    definition: {
      datasets: [
        {
          type: "streaming_table",
          name: "orders",
          flows: [
            {
              name: "ingest",
              source: {
                type: "kafka",
                bootstrap_servers: kafka.broker.bootstrap,
                topic: TOPIC,
                starting_offsets: "earliest",
                value_format: "json",
                schema: { id: "BIGINT", cents: "BIGINT", note: "VARCHAR" },
              },
              sql: "SELECT * FROM source",
              // Batches that end mid-partition, shared between the partitions.
              options: { max_offsets_per_batch: 5 },
            },
          ],
        },
      ],
    },
  });
  const rows = async (schema: string) =>
    (
      await cp.client.query(`${CATALOG}.${schema}.orders`, {
        sql: 'SELECT * FROM t ORDER BY partition, "offset"',
        limit: 10_000,
      })
    ).rows;

  it("equals the DuckDB-only twin through random updates, engines, rewinds and replays", async () => {
    let pair = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 3, maxLength: 7 }), async (steps) => {
        const n = pair++;
        const schemas = { duck: `duck_${n}`, mixed: `mixed_${n}` };
        const ids = {
          duck: (await cp.client.createPipeline(settings(schemas.duck, "duckdb"))).pipeline_id,
          mixed: (await cp.client.createPipeline(settings(schemas.mixed, "duckdb"))).pipeline_id,
        };
        const points: { duck: string; mixed: string; records: number }[] = [];
        const sparkRan: string[] = [];
        let read = produced;
        // The twins end with a Spark batch over every partition.
        const last: Step[] = [
          { kind: "produce", records: [0, 1, 2].map((partition) => ({ partition, cents: partition })) },
          { kind: "update", engine: "spark" },
        ];
        for (const s of [...steps, ...last]) {
          if (s.kind === "produce") {
            await kafka.produce(
              TOPIC,
              s.records.map((r) => {
                const id = ++produced;
                return {
                  key: `k${id}`,
                  value: { id, cents: r.cents, note: id % 4 === 0 ? null : `n${id}` },
                  partition: r.partition,
                  headers: { origin: `p${r.partition}` },
                };
              }),
            );
            continue;
          }
          await cp.client.editPipeline(ids.mixed, settings(schemas.mixed, s.engine));
          if (s.kind === "rewind") {
            const point = points.at(-Math.min(s.back, points.length));
            if (!point) continue;
            await twins.run(ids.duck, { rewind_spec: { rewind_point_id: point.duck } });
            await twins.run(ids.mixed, { rewind_spec: { rewind_point_id: point.mixed } });
          }
          const updates = { duck: await twins.run(ids.duck), mixed: await twins.run(ids.mixed) };
          read = produced;
          if (s.engine === "spark")
            sparkRan.push(
              ...(await twins.progress(ids.mixed, updates.mixed))
                .map((p) => p.engine)
                .filter((e) => e !== undefined),
            );
          // Nothing produced yet: neither twin has written its table.
          if (read === 0) continue;
          const [duck, mixed] = [await rows(schemas.duck), await rows(schemas.mixed)];
          expect(mixed, `after ${JSON.stringify(s)}`).toEqual(duck);
          // Every record the topic holds, once (ids are 1…produced, in order of production).
          const seen = mixed.map((row) => Number((row["value"] as { id: number }).id)).sort((a, b) => a - b);
          expect(seen).toEqual(Array.from({ length: read }, (_, i) => i + 1));
          const captured = await Promise.all([
            cp.client.captureRewindPoint(ids.duck),
            cp.client.captureRewindPoint(ids.mixed),
          ]);
          points.push({
            duck: captured[0].rewind_point_id,
            mixed: captured[1].rewind_point_id,
            records: read,
          });
        }
        expect(new Set(sparkRan)).toEqual(new Set(["spark"]));
      }),
      { numRuns: 2, endOnFailure: true },
    );
    expect(produced).toBeGreaterThan(0);
  });
});
