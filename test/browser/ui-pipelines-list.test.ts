import { randomBytes } from "node:crypto";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../support/control-plane.ts";
import { accessibilityProblems, launchBrowser, newPage, UI_ASSETS } from "../support/browser.ts";

/**
 * The pipelines list while a row's details are still on their way (seconds under load): the row says
 * it is loading, never "never run" or "no points" for a pipeline whose runs are not known yet. The
 * details' request is held by the test and let go once the loading row has been seen.
 */

const SCHEMA = `uil_${randomBytes(3).toString("hex")}`;

describe("the web UI's pipelines list", () => {
  let cp: TestControlPlane;
  let browser: Browser;
  let page: Page;
  let pipelineId: string;

  beforeAll(async () => {
    cp = await startTestControlPlane({ uiAssets: UI_ASSETS });
    browser = await launchBrowser();
    page = await newPage(browser);
    ({ pipeline_id: pipelineId } = await cp.client.createPipeline({
      name: `listed-${SCHEMA}`,
      catalog: "demo",
      schema: SCHEMA,
      definition: {
        datasets: [
          {
            type: "streaming_table",
            name: "clicks",
            flows: [
              {
                name: "ingest",
                source: { type: "auto_loader", path: cp.landing, format: "json", schema: { id: "BIGINT" } },
                sql: "SELECT * FROM source",
              },
            ],
          },
        ],
      },
    }));
  });
  afterAll(async () => {
    await browser?.close();
    await cp?.close();
  });

  it("shows a row as loading until its details arrive, then that it never ran", async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    await page.route(
      (url) => url.pathname === `/api/2.0/pipelines/${pipelineId}`,
      async (route) => {
        await released;
        await route.continue();
      },
    );
    await page.goto(`${cp.plane.endpoint}/#token=${encodeURIComponent(cp.plane.token)}`);
    const row = page.locator("tr", { has: page.getByText(pipelineId) });
    await row.getByText("loading…").first().waitFor();
    expect(await row.locator("td").allTextContents()).toEqual([
      expect.stringContaining(pipelineId),
      "idle",
      "loading…",
      "loading…",
      "v1",
      expect.any(String),
    ]);
    expect(await accessibilityProblems(page)).toEqual([]);

    release();
    await row.getByText("never run").waitFor();
    expect(await row.getByText("no points").count()).toBe(1);
    expect(await row.getByText("loading…").count()).toBe(0);
  });
});
