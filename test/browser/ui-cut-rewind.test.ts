import { randomBytes } from "node:crypto";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { testAws } from "../support/aws.ts";
import { accessibilityProblems, launchBrowser, newPage, screenshot, UI_ASSETS } from "../support/browser.ts";
import { startTestControlPlane, type TestControlPlane } from "../support/control-plane.ts";

/**
 * Two pipelines rewound to one cut in a real browser against the real local runtime
 * (docs/rewind-across-pipelines.md): silver reads bronze's table. From silver's page the user picks
 * bronze too, sees Ebb's order, has a cut by a time before any point refused (the refusal names the
 * pipeline and why), previews the cut at bronze's first point (each pipeline's point and each table's
 * version now → restored), confirms, watches both rewinds, replays them in order, and finds on
 * silver's update page which cut and which ordered run each update was. Tables asserted through the API.
 */

const TAG = randomBytes(3).toString("hex");
const CATALOG = "demo";
const BRONZE = `bronze-${TAG}`;
const SILVER = `silver-${TAG}`;
const rewindOn = { "pipelines.rewind.enabled": "true" };

describe("the web UI: several pipelines rewound to one cut, then replayed in order", () => {
  let cp: TestControlPlane;
  let browser: Browser;
  let page: Page;
  let bronze: string;
  let silver: string;
  let firstPoint: string;
  const silverTable = `${CATALOG}.cut_${TAG}_s.clean`;

  const run = async (pipelineId: string) => {
    const { update_id } = await cp.client.startUpdate(pipelineId, {});
    const update = await cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
    expect(update.state, update.error?.message).toBe("COMPLETED");
  };
  const ids = async (table: string) =>
    (await cp.client.query(table, { sql: "SELECT id FROM t ORDER BY id" })).rows.map((r) => Number(r["id"]));
  const expectAccessible = async () => expect(await accessibilityProblems(page)).toEqual([]);

  beforeAll(async () => {
    cp = await startTestControlPlane({ uiAssets: UI_ASSETS });
    browser = await launchBrowser();
    page = await newPage(browser);
    ({ pipeline_id: bronze } = await cp.client.createPipeline({
      name: BRONZE,
      catalog: CATALOG,
      schema: `cut_${TAG}_b`,
      configuration: rewindOn,
      definition: {
        datasets: [
          {
            type: "streaming_table",
            name: "raw",
            flows: [
              {
                name: "ingest",
                source: { type: "auto_loader", path: cp.landing, format: "json", schema: { id: "BIGINT" } },
                sql: "SELECT id FROM source",
              },
            ],
          },
        ],
      },
    }));
    ({ pipeline_id: silver } = await cp.client.createPipeline({
      name: SILVER,
      catalog: CATALOG,
      schema: `cut_${TAG}_s`,
      configuration: rewindOn,
      definition: {
        datasets: [
          {
            type: "streaming_table",
            name: "clean",
            flows: [
              {
                name: "read_raw",
                source: {
                  type: "delta",
                  path: `s3://${testAws().storage.bucket}/tables/${CATALOG}/cut_${TAG}_b/raw`,
                },
                sql: "SELECT id FROM source",
              },
            ],
          },
        ],
      },
    }));
    await cp.land("1.json", [{ id: 1 }, { id: 2 }, { id: 3 }]);
    await run(bronze);
    await run(silver);
    firstPoint = (await cp.client.rewindPoints(bronze)).rewind_points.find(
      (p) => p.kind !== "dry-run",
    )!.rewind_point_id;
    await cp.land("2.json", [{ id: 4 }, { id: 5 }]);
    await run(bronze);
    await run(silver);
    expect(await ids(silverTable)).toEqual([1, 2, 3, 4, 5]);
  });

  afterEach(async (context) => {
    if (context.task.result?.state === "fail" && page)
      await screenshot(page, `failed-cut-${context.task.name.slice(0, 40)}`);
  });
  afterAll(async () => {
    await browser?.close();
    await cp?.close();
  });

  it("picks the pipelines from silver's page, and Ebb orders them by their reads", async () => {
    await page.goto(`${cp.plane.endpoint}/#token=${encodeURIComponent(cp.plane.token)}`);
    await page.getByRole("heading", { name: "Pipelines" }).waitFor();
    await page.getByRole("link", { name: SILVER }).click();
    await page.getByRole("button", { name: "More run options" }).click();
    await page.getByRole("menuitem", { name: "Rewind with other pipelines…" }).click();
    await page.getByRole("heading", { name: "Rewind pipelines to one cut" }).waitFor();
    await expect(page.getByRole("checkbox", { name: SILVER }).isChecked()).resolves.toBe(true);
    await page.getByRole("checkbox", { name: BRONZE }).check();
    const order = page.getByRole("list", { name: "Order" });
    await order.locator(`li[data-pipeline="${SILVER}"]`).waitFor();
    await expect(order.getByRole("listitem").allTextContents()).resolves.toEqual([
      `1. ${BRONZE}`,
      `2. ${SILVER} reads ${BRONZE}.raw`,
    ]);
    await expectAccessible();
  });

  it("shows a refused plan: a cut before any point, naming the pipeline and why; nothing changes", async () => {
    const before = (await cp.client.listUpdates(silver)).updates.length;
    await page.getByRole("button", { name: "A time" }).click();
    await page.getByLabel(/^Cut at/).fill("2020-01-01 00:00:00");
    await page.getByRole("button", { name: "Preview the plan" }).click();
    const refusal = page.getByRole("alert").filter({ hasText: "The plan is refused" });
    await refusal.waitFor();
    const text = (await refusal.textContent()) ?? "";
    expect(text).toContain(`pipeline "${BRONZE}" has no live rewind point at or before the cut's time`);
    expect(text).toContain("INVALID_CUT_SPECIFICATION.NO_POINT_IN_CUT");
    await expect(page.getByRole("button", { name: "Rewind", exact: true }).count()).resolves.toBe(0);
    await screenshot(page, "cut-1-refused");
    expect((await cp.client.listUpdates(silver)).updates.length).toBe(before);
  });

  it("previews the cut at bronze's first point: each pipeline's point and each table's versions", async () => {
    await page.getByRole("button", { name: `A point of ${BRONZE}` }).click();
    await page.getByLabel(`Rewind point of ${BRONZE}`).selectOption(firstPoint);
    await page.getByRole("button", { name: "Preview the plan" }).click();
    const plan = page.getByRole("table", { name: "Cut plan" });
    await plan.waitFor({ timeout: 120_000 });
    // What the API plans, the page shows.
    const dry = await cp.client.rewindToCut({
      pipeline_ids: [silver, bronze],
      rewind_point_id: firstPoint,
      dry_run: true,
    });
    expect(dry.pipelines.map((p) => p.name)).toEqual([BRONZE, SILVER]);
    for (const p of dry.pipelines) {
      const row = plan.locator(`tr[data-pipeline="${p.name}"]`);
      await expect(row.textContent()).resolves.toContain(p.rewind_point_id);
      const d = p.datasets[0]!;
      expect(d.action).toBe("RESTORE");
      await expect(row.locator("li").textContent()).resolves.toBe(
        `${d.dataset.split(".").at(-1)}: v${d.version} → v${d.target_version}`,
      );
    }
    const reads = dry.pipelines[1]!.upstream_versions[0]!;
    await expect(plan.locator(`tr[data-pipeline="${SILVER}"]`).textContent()).resolves.toContain(
      `${BRONZE}.raw v${reads.version}`,
    );
    await screenshot(page, "cut-2-plan");
    await expectAccessible();
  });

  it("rewinds both on confirmation, upstreams first, then replays them in order", async () => {
    await page.getByRole("button", { name: "Rewind", exact: true }).click();
    await page.getByRole("dialog", { name: "Rewind these pipelines now?" }).waitFor();
    await page.getByRole("button", { name: "Rewind 2 pipelines" }).click();
    const rewinds = page.getByRole("list", { name: "Rewinds" });
    await expect.poll(() => rewinds.locator("li.progress-done").count(), { timeout: 180_000 }).toBe(2);
    await page.getByText("Rewound to one cut.").waitFor();
    await screenshot(page, "cut-3-rewound");
    expect(await ids(silverTable)).toEqual([1, 2, 3]);

    await page.getByRole("button", { name: "Replay in order" }).click();
    const replay = page.getByRole("list", { name: "Ordered run" });
    await expect.poll(() => replay.locator("li.progress-done").count(), { timeout: 180_000 }).toBe(2);
    await expect(replay.getByRole("listitem").first().textContent()).resolves.toContain(`1/2 ${BRONZE}`);
    await screenshot(page, "cut-4-replayed");
    expect(await ids(silverTable)).toEqual([1, 2, 3, 4, 5]);
  });

  it("says on silver's update page which cut and which ordered run each update belongs to", async () => {
    const updates = (await cp.client.listUpdates(silver)).updates;
    const rewound = updates.find((u) => u.cut)!;
    const replayed = updates.find((u) => u.ordered_run)!;
    await page.getByRole("list", { name: "Ordered run" }).getByRole("link", { name: SILVER }).click();
    const list = page.getByRole("list", { name: "Updates" });
    await list.getByText("Run 2 of 2 in order").click();
    const details = page.getByRole("region", { name: "Selected update" });
    await expect
      .poll(() => details.locator('[data-fact="ordered-run"]').textContent())
      .toBe(`run 2 of 2 in ordered run ${replayed.ordered_run!.request_id}`);
    await list.getByText("Rewind to a cut").click();
    await expect
      .poll(() => details.locator('[data-fact="cut"]').textContent())
      .toContain(rewound.cut!.request_id);
    await screenshot(page, "cut-5-update-page");
    await expectAccessible();
  });

  it("fits a 375-px phone: nothing scrolls sideways", async () => {
    const phone = await newPage(browser, { viewport: { width: 375, height: 812 } });
    await phone.goto(`${cp.plane.endpoint}/`);
    await phone.getByLabel("Token").fill(cp.plane.token);
    await phone.getByRole("button", { name: "Sign in" }).click();
    await phone.getByRole("link", { name: SILVER }).waitFor();
    await phone.goto(`${cp.plane.endpoint}/rewinds?from=${silver}`);
    await phone.getByRole("checkbox", { name: BRONZE }).check();
    await phone.getByLabel(`Rewind point of ${BRONZE}`).selectOption(firstPoint);
    await phone.getByRole("button", { name: "Preview the plan" }).click();
    await phone.getByRole("table", { name: "Cut plan" }).waitFor({ timeout: 120_000 });
    await screenshot(phone, "phone-cut");
    const width = (await phone.evaluate("document.documentElement.scrollWidth")) as number;
    await phone.context().close();
    expect(width).toBeLessThanOrEqual(375);
  });
});
