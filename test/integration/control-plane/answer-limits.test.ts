import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EbbApiError } from "../../../shared/client/ebb-client.ts";
import { ANSWER_BYTES_VARIABLE } from "../../../shared/control/tables/answer-size.ts";
import { ingestPipeline, startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * Answers are bounded in bytes as well as rows (the functions run in this process, so the limit set
 * here is theirs): a query's answer over the limit is refused with RESULT_TOO_LARGE before it is
 * built; a statement's is answered in chunks of at most the limit, the rest read with
 * `…/result/chunks/{n}`; Databricks' `byte_limit` truncates; one row over a chunk is refused.
 */
describe("answers bounded in bytes", () => {
  let cp: TestControlPlane;
  const LIMIT = 64 * 1024;
  let table: string;
  beforeAll(async () => {
    process.env[ANSWER_BYTES_VARIABLE] = String(LIMIT);
    cp = await startTestControlPlane();
    const { pipeline_id } = await cp.client.createPipeline(
      ingestPipeline({ name: "answer limits", catalog: "answers", schema: "limits", path: cp.landing }),
    );
    await cp.land(
      "rows.json",
      Array.from({ length: 10 }, (_, id) => ({ id })),
    );
    const { update_id } = await cp.client.startUpdate(pipeline_id);
    expect((await cp.client.waitForUpdate(pipeline_id, update_id, { intervalMs: 200 })).state).toBe(
      "COMPLETED",
    );
    table = "answers.limits.raw";
  });
  afterAll(async () => {
    delete process.env[ANSWER_BYTES_VARIABLE];
    await cp?.close();
  });

  it("refuses a table query whose answer is over the limit, naming it and the ways out", async () => {
    const refused = await cp.client
      .query(table, { sql: "SELECT id, repeat('x', 10000) AS s FROM t" })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(EbbApiError);
    expect(refused).toMatchObject({ status: 400, errorCode: "RESULT_TOO_LARGE" });
    expect((refused as EbbApiError).message).toMatch(/over the 64 KB one answer may carry: add a LIMIT/);
    // Within the limit, the same query answers.
    const small = await cp.client.query(table, {
      sql: "SELECT id, repeat('x', 1000) AS s FROM t ORDER BY id",
    });
    expect(small.rows).toHaveLength(10);
  });

  it("answers a large statement in chunks, each within the limit, that read back whole", async () => {
    const answer = await cp.client.executeStatement({
      statement: "SELECT id, repeat('y', 1000) AS s FROM range(200) AS r(id) ORDER BY id",
    });
    expect(answer.status.state).toBe("SUCCEEDED");
    const manifest = answer.manifest as unknown as {
      total_chunk_count: number;
      total_row_count: number;
      truncated: boolean;
      chunks: { chunk_index: number; row_offset: number; row_count: number }[];
    };
    expect(manifest.total_chunk_count).toBeGreaterThan(2);
    expect(manifest).toMatchObject({ total_row_count: 200, truncated: false });
    const ids: string[] = [];
    let chunk = answer.result as unknown as {
      data_array: string[][];
      next_chunk_index?: number;
      row_offset: number;
    };
    for (;;) {
      expect(Buffer.byteLength(JSON.stringify(chunk))).toBeLessThan(LIMIT * 1.2);
      expect(chunk.row_offset).toBe(ids.length);
      ids.push(...chunk.data_array.map((row) => row[0]!));
      if (chunk.next_chunk_index === undefined) break;
      chunk = await cp.client.request(
        "GET",
        `/api/2.0/sql/statements/${answer.statement_id}/result/chunks/${chunk.next_chunk_index}`,
      );
    }
    expect(ids).toEqual(Array.from({ length: 200 }, (_, i) => String(i)));
    const past = await cp.client
      .request(
        "GET",
        `/api/2.0/sql/statements/${answer.statement_id}/result/chunks/${manifest.total_chunk_count}`,
      )
      .catch((error: unknown) => error);
    expect(past).toMatchObject({ status: 400, errorCode: "INVALID_PARAMETER_VALUE" });
  });

  it("truncates a statement at its byte_limit, and refuses one row over a chunk", async () => {
    const truncated = await cp.client.executeStatement({
      statement: "SELECT id, repeat('z', 1000) AS s FROM range(100) AS r(id) ORDER BY id",
      byte_limit: 10_000,
    } as never);
    expect(truncated.manifest).toMatchObject({ truncated: true });
    expect(truncated.manifest!.total_row_count).toBeLessThan(10);
    expect(truncated.manifest!.total_row_count).toBeGreaterThan(0);

    const huge = await cp.client.executeStatement({ statement: "SELECT repeat('x', 200000) AS s" });
    expect(huge.status).toMatchObject({
      state: "FAILED",
      error: { message: expect.stringMatching(/^\[RESULT_TOO_LARGE\] a row of the statement's result is/) },
    });
  });
});
