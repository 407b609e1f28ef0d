import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EbbApiError } from "../../../shared/client/ebb-client.ts";
import {
  createIngestPipelines,
  startTestControlPlane,
  type TestControlPlane,
} from "../../support/control-plane.ts";

/**
 * `GET /api/2.0/pipelines` paged as Databricks pages it, through HTTP on the local runtime:
 * `max_results` per page and `next_page_token` until the last page (the SDKs' iterators follow it).
 */
describe("the pipeline listing", () => {
  let cp: TestControlPlane;
  let ids: string[];

  beforeAll(async () => {
    cp = await startTestControlPlane();
    ids = await createIngestPipelines(cp, 3, "listing");
  });
  afterAll(async () => {
    for (const id of ids ?? []) await cp.client.deletePipeline(id, true);
    await cp?.close();
  });

  it("answers one pipeline per page with max_results=1 and a next_page_token until the last", async () => {
    const everyPipeline = (await cp.client.listPipelines()).statuses.map((s) => s.pipeline_id);
    expect(everyPipeline).toEqual(expect.arrayContaining(ids));
    const pages: string[][] = [];
    let page_token: string | undefined;
    do {
      const page = await cp.client.listPipelines({ max_results: 1, ...(page_token ? { page_token } : {}) });
      pages.push(page.statuses.map((s) => s.pipeline_id));
      page_token = page.next_page_token;
    } while (page_token);
    expect(pages.every((page) => page.length === 1)).toBe(true);
    // Other test files create and delete pipelines meanwhile: the listing is compared on this file's
    // own, in order, each once; and no pipeline is answered twice.
    const paged = pages.flat();
    expect(new Set(paged).size).toBe(paged.length);
    const own = (listed: string[]) => listed.filter((id) => ids.includes(id));
    expect(own(paged)).toEqual(own(everyPipeline));
    expect(own(paged)).toHaveLength(ids.length);
  });

  it("refuses a page_token it did not issue (INVALID_PARAMETER_VALUE)", async () => {
    const error = await cp.client.listPipelines({ page_token: "not-a-token" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EbbApiError);
    expect(error).toMatchObject({ status: 400, errorCode: "INVALID_PARAMETER_VALUE" });
  });
});
