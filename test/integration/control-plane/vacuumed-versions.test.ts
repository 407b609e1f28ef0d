import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EbbApiError } from "../../../shared/client/ebb-client.ts";
import { ingestPipeline, startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * Reads of versions whose data files VACUUM removed (issue 33: it happens a week after any rewind,
 * once the RESTORE's removed files pass delta.deletedFileRetentionDuration). Here the rewind points
 * live 30 seconds (then one) and VACUUM runs with no retention, so the week passes in seconds. Each read
 * answers its own code naming the table, the versions and the retention, with the way out; the onset
 * scan starts after the vacuumed versions.
 */
const TABLE = "vacuumed.reads.raw";

describe("reads of vacuumed versions", () => {
  let cp: TestControlPlane;
  let pipelineId: string;
  const run = async (body?: unknown) => {
    const { update_id } = await cp.client.startUpdate(pipelineId, body);
    return cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
  };
  const refusal = async (call: Promise<unknown>): Promise<EbbApiError> => {
    const error = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(EbbApiError);
    return error as EbbApiError;
  };

  beforeAll(async () => {
    cp = await startTestControlPlane();
    const pipeline = (retention: string) => ({
      ...ingestPipeline({ name: "vacuumed reads", catalog: "vacuumed", schema: "reads", path: cp.landing }),
      configuration: { "pipelines.rewind.enabled": "true", "pipelines.rewind.retention": retention },
    });
    ({ pipeline_id: pipelineId } = await cp.client.createPipeline(pipeline("30 seconds")));
    // raw@1 good, raw@2 bad; the rewind restores version 1 (RESTORE at 3, removing version 2's
    // file); the replay reads the bad rows again with a good one (version 4).
    await cp.land("1.json", [{ id: 1 }, { id: 2 }]);
    expect((await run()).state).toBe("COMPLETED");
    const good = (await cp.client.rewindPoints(pipelineId)).rewind_points[0]!.rewind_point_id;
    await cp.land("2.json", [{ id: -1 }, { id: -2 }]);
    expect((await run()).state).toBe("COMPLETED");
    const rewind = await run({
      rewind_spec: {
        rewind_point_id: good,
        datasets: [{ identifier: TABLE, cascade: true, reset_checkpoints: true }],
      },
    });
    expect(rewind.state).toBe("COMPLETED");
    await cp.land("3.json", [{ id: 3 }]);
    expect((await run()).state).toBe("COMPLETED");
    // Once no live point needs them, VACUUM removes the files the RESTORE removed. A point expires
    // the pipeline's current retention after it was recorded: 30 seconds kept the good point for the
    // rewind on a busy machine; one second now expires them all instead of waiting out the 30.
    await cp.client.editPipeline(pipelineId, pipeline("1 second"));
    for (let waited = 0; (await cp.client.rewindPoints(pipelineId)).rewind_points.length > 0; waited++) {
      expect(waited, "the rewind points expire").toBeLessThan(60);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    const vacuum = await cp.client.vacuum(TABLE, { retain_hours: 0, allow_short_retention: true });
    expect(vacuum.files.length).toBeGreaterThan(0);
  });
  afterAll(async () => {
    if (pipelineId) await cp.client.deletePipeline(pipelineId, true).catch(() => undefined);
    await cp?.close();
  });

  it("a time travel read of a vacuumed version names the table, the version and the retention", async () => {
    const history = (await cp.client.history(TABLE)).history;
    expect(history.find((entry) => entry.version === 3)?.operation).toBe("RESTORE");
    const error = await refusal(cp.client.query(TABLE, { version: 2 }));
    expect(error.status).toBe(400);
    expect(error.errorCode).toBe("DELTA_FILE_NOT_FOUND_DETAILED");
    expect(error.message).toContain(`table ${TABLE}: version 2 can no longer be read: VACUUM removed`);
    expect(error.message).toContain("delta.deletedFileRetentionDuration (interval 1 week)");
    expect(error.message).toContain("Read a later version");
    // The restored version's files are live: it reads.
    expect((await cp.client.query(TABLE, { version: 1 })).rows).toHaveLength(2);
  });

  it("the change feed across vacuumed versions names them and where to start instead", async () => {
    const error = await refusal(cp.client.changes(TABLE, { starting_version: 1 }));
    expect(error.errorCode).toBe("DELTA_CHANGE_DATA_FILE_NOT_FOUND");
    expect(error.message).toContain(`table ${TABLE}: the change data of versions 2, 3 can no longer be read`);
    expect(error.message).toContain("from version 4 on (starting_version)");
    const after = await cp.client.changes(TABLE, { starting_version: 4 });
    expect(after.changes.length).toBeGreaterThan(0);
  });

  it("the onset scan starts after the vacuumed versions", async () => {
    const onset = await cp.client.onset(TABLE, { predicate: "id < 0" });
    expect(onset).toMatchObject({ found: true, starting_version: 4, first_bad_version: 4 });
    const from1 = await cp.client.onset(TABLE, { predicate: "id < 0", starting_version: 1 });
    expect(from1).toMatchObject({ found: true, starting_version: 4, first_bad_version: 4 });
  });

  it("the seed's onset SQL fails as the statement's, with the code, not INTERNAL_ERROR", async () => {
    const statement = (await readFile(new URL("../../support/seed-sql/onset.sql", import.meta.url), "utf8"))
      .replaceAll("catalog.schema.table", TABLE)
      .replace("(event_date >= '2026-09-29')", "(id < 0)");
    const answer = await cp.client.executeStatement({ statement });
    expect(answer.status.state).toBe("FAILED");
    expect(answer.status.error?.message).toContain("[DELTA_CHANGE_DATA_FILE_NOT_FOUND]");
    expect(answer.status.error?.message).toContain(TABLE);
  });
});
