import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EbbApiError } from "../../../shared/client/ebb-client.ts";
import {
  createIngestPipelines,
  ingestPipeline,
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

  it("filters by name LIKE '<pattern>', % as any characters, in any case, page by page", async () => {
    // Other files' pipelines share the store: this test's names carry a tag of their own.
    const tag = `filter${Math.random().toString(36).slice(2, 10)}`;
    const named = async (name: string) =>
      (
        await cp.client.createPipeline(
          ingestPipeline({
            name,
            catalog: tag,
            schema: name.toLowerCase().replaceAll(/\W/g, "_"),
            path: cp.landing,
          }),
        )
      ).pipeline_id;
    const own = [
      await named(`${tag} orders`),
      await named(`${tag} Orders_daily`),
      await named(`${tag} clicks`),
    ];
    try {
      const names = async (filter: string, max_results?: number) => {
        const listed: string[] = [];
        let page_token: string | undefined;
        do {
          const page = await cp.client.listPipelines({
            filter,
            ...(max_results ? { max_results } : {}),
            ...(page_token ? { page_token } : {}),
          });
          listed.push(...page.statuses.map((s) => s.name));
          page_token = page.next_page_token;
        } while (page_token);
        return listed.sort();
      };
      expect(await names(`name LIKE '${tag} %orders%'`, 1)).toEqual([`${tag} Orders_daily`, `${tag} orders`]);
      expect(await names(`NAME like '%${tag.toUpperCase()} CLICKS'`)).toEqual([`${tag} clicks`]);
      expect(await names(`name LIKE '${tag}'`)).toEqual([]);
      // `_` is literal (Databricks documents % as the wildcard).
      expect(await names(`name LIKE '${tag} orders_daily'`)).toEqual([`${tag} Orders_daily`]);
      expect(await names(`name LIKE '${tag} orders_'`)).toEqual([]);
    } finally {
      for (const id of own) await cp.client.deletePipeline(id, true);
    }
  });

  it.each(["notebook='/Users/me/etl'", "name = 'listing 0'", "name LIKE 'a%' AND name LIKE '%b'"])(
    "refuses the filter %s naming the form it reads (UNSUPPORTED_PIPELINE_FILTER)",
    async (filter) => {
      const error = await cp.client.listPipelines({ filter }).catch((e: unknown) => e);
      expect(error).toMatchObject({ status: 400, errorCode: "UNSUPPORTED_PIPELINE_FILTER" });
      expect((error as Error).message).toContain("name LIKE '<pattern>'");
    },
  );

  it("refuses a page_token it did not issue (INVALID_PARAMETER_VALUE)", async () => {
    const error = await cp.client.listPipelines({ page_token: "not-a-token" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EbbApiError);
    expect(error).toMatchObject({ status: 400, errorCode: "INVALID_PARAMETER_VALUE" });
  });
});
