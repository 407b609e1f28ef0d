import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EbbApiError } from "../../../shared/client/ebb-client.ts";
import { ingestPipeline, startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * `GET …/rewind-points` paged as the other listings are, through HTTP on the local runtime: a week of
 * hourly points is ~170, each checked for restorability, so the answer comes `max_results` at a time
 * with a `next_page_token` until the last page.
 */
describe("the rewind point listing", () => {
  let cp: TestControlPlane;
  let id: string;

  beforeAll(async () => {
    cp = await startTestControlPlane();
    await cp.land("a.json", [{ id: 1 }]);
    id = (
      await cp.client.createPipeline({
        ...ingestPipeline({ name: "point listing", catalog: "points", schema: "listing", path: cp.landing }),
        configuration: { "pipelines.rewind.enabled": "true" },
      })
    ).pipeline_id;
    const { update_id } = await cp.client.startUpdate(id);
    expect((await cp.client.waitForUpdate(id, update_id)).state).toBe("COMPLETED");
    for (let i = 0; i < 4; i++) await cp.client.captureRewindPoint(id);
  }, 600_000);
  afterAll(async () => {
    if (id) await cp.client.deletePipeline(id, true);
    await cp?.close();
  });

  it("answers max_results points a page, newest first, and a next_page_token until the last", async () => {
    const everyPoint = (await cp.client.rewindPoints(id)).rewind_points.map((p) => p.rewind_point_id);
    expect(everyPoint).toHaveLength(5); // the update's end, and four captured
    const pages: string[][] = [];
    let page_token: string | undefined;
    do {
      const page = await cp.client.rewindPoints(id, {
        max_results: 2,
        ...(page_token ? { page_token } : {}),
      });
      pages.push(page.rewind_points.map((p) => p.rewind_point_id));
      page_token = page.next_page_token;
    } while (page_token);
    expect(pages.map((page) => page.length)).toEqual([2, 2, 1]);
    expect(pages.flat()).toEqual(everyPoint);
    expect(await cp.client.allRewindPoints(id)).toHaveLength(5);
  });

  it("refuses a page_token another listing issued (INVALID_PARAMETER_VALUE)", async () => {
    const { next_page_token } = await cp.client.listUpdates(id, { max_results: 1 });
    const foreign = next_page_token ?? "not-a-token";
    const error = await cp.client.rewindPoints(id, { page_token: foreign }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EbbApiError);
    expect(error).toMatchObject({ status: 400, errorCode: "INVALID_PARAMETER_VALUE" });
  });
});
