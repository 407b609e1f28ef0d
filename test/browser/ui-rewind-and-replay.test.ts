import { randomBytes } from "node:crypto";
import type { Browser, Page, Request } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../support/control-plane.ts";
import { accessibilityProblems, launchBrowser, newPage, screenshot, UI_ASSETS } from "../support/browser.ts";

/**
 * The web UI's main job in a real browser against the real local runtime: a pipeline is created,
 * run, broken by a bad deploy and run again through the API; then in the browser the onset is found,
 * the wizard picks the point before it, datasets are deselected and reselected, the dry-run preview's
 * counts match the change feed, the rewind is confirmed, and after the fix is deployed the replay is
 * started from the UI. The tables are asserted through the API. The browser is east of UTC
 * (Asia/Kolkata): a time the user reads and types back must reach the API as the same instant.
 * Last, every page on a 375-px phone.
 */

const SCHEMA = `ui_${randomBytes(3).toString("hex")}`;
const CLEAN_GOOD =
  "SELECT id, CAST(amount_cents AS DOUBLE) / 100 AS amount, upper(region) AS region FROM source";
const CLEAN_BAD = "SELECT id, CAST(amount_cents AS DOUBLE) AS amount, upper(region) AS region FROM source";

const pipelineBody = (landing: string, cleanSql: string) => ({
  name: `orders-${SCHEMA}`,
  catalog: "demo",
  schema: SCHEMA,
  configuration: { "pipelines.rewind.enabled": "true" },
  definition: {
    datasets: [
      {
        type: "streaming_table",
        name: "raw_orders",
        flows: [
          {
            name: "ingest",
            source: {
              type: "auto_loader",
              path: landing,
              format: "json",
              schema: { id: "BIGINT", amount_cents: "BIGINT", region: "VARCHAR" },
            },
            sql: "SELECT * FROM source",
          },
        ],
      },
      {
        type: "streaming_table",
        name: "orders",
        flows: [{ name: "clean", source: { type: "stream", dataset: "raw_orders" }, sql: cleanSql }],
      },
      {
        type: "materialized_view",
        name: "revenue_by_region",
        sql: "SELECT region, count(*) AS orders, round(sum(amount), 2) AS revenue FROM orders GROUP BY region",
      },
    ],
  },
});

describe("the web UI: rewind and replay in a browser", () => {
  let cp: TestControlPlane;
  let browser: Browser;
  let page: Page;
  let pipelineId: string;
  const table = (name: string) => `demo.${SCHEMA}.${name}`;

  const run = async (body: unknown = {}) => {
    const { update_id } = await cp.client.startUpdate(pipelineId, body);
    const update = await cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
    expect(update.state, update.error?.message).toBe("COMPLETED");
    return update;
  };
  const expectAccessible = async () => expect(await accessibilityProblems(page)).toEqual([]);

  beforeAll(async () => {
    cp = await startTestControlPlane({ uiAssets: UI_ASSETS });
    browser = await launchBrowser();
    page = await newPage(browser, { timezoneId: "Asia/Kolkata" });
    ({ pipeline_id: pipelineId } = await cp.client.createPipeline(pipelineBody(cp.landing, CLEAN_GOOD)));
    await cp.land("day-1.json", [
      { id: 1, amount_cents: 1250, region: "eu" },
      { id: 2, amount_cents: 4000, region: "us" },
      { id: 3, amount_cents: 999, region: "eu" },
    ]);
    await run();
    await new Promise((resolve) => setTimeout(resolve, 1100)); // whole seconds between good and bad commits
    await cp.client.editPipeline(pipelineId, pipelineBody(cp.landing, CLEAN_BAD));
    await cp.land("day-2.json", [
      { id: 4, amount_cents: 2000, region: "us" },
      { id: 5, amount_cents: 500, region: "apac" },
    ]);
    await run();
  });

  afterEach(async (context) => {
    if (context.task.result?.state === "fail" && page)
      await screenshot(page, `failed-${context.task.name.slice(0, 40)}`);
  });
  afterAll(async () => {
    await browser?.close();
    await cp?.close();
  });

  it("signs in from the one-time link, and the token leaves the address bar", async () => {
    await page.goto(`${cp.plane.endpoint}/#token=${encodeURIComponent(cp.plane.token)}`);
    await page.getByRole("heading", { name: "Pipelines" }).waitFor();
    expect(new URL(page.url()).hash).toBe("");
    await page.getByRole("link", { name: `orders-${SCHEMA}` }).waitFor();
    await screenshot(page, "pipelines");
    await expectAccessible();
  });

  it("shows the pipeline's graph, datasets and updates", async () => {
    await page.getByRole("link", { name: `orders-${SCHEMA}` }).click();
    for (const name of ["raw_orders", "orders", "revenue_by_region"]) {
      await page.locator(`.graph-node[data-dataset="${name}"]`).waitFor();
    }
    await expect(page.locator(".graph-source").first().textContent()).resolves.toContain("auto_loader");
    await expect
      .poll(() => page.locator('.graph-node[data-dataset="orders"]').textContent())
      .toContain("5 rows");
    await expect
      .poll(() => page.getByRole("list", { name: "Updates" }).getByRole("listitem").count())
      .toBe(2);
    await screenshot(page, "pipeline");
    await expectAccessible();
  });

  it("rewinds through the wizard: onset, point, datasets, dry-run preview, confirmation, progress", async () => {
    await page.getByRole("button", { name: "More run options" }).click();
    await page.getByRole("menuitem", { name: "Rewind pipeline…" }).click();
    await page.getByRole("heading", { name: /^Rewind orders-/ }).waitFor();
    await expectAccessible();

    // 1. the onset finder names the first bad version, and the newest point before it is picked
    await page.getByRole("combobox", { name: "Table" }).selectOption(table("orders"));
    await page.getByLabel("Bad rows where").fill("amount >= 100");
    await page.getByRole("button", { name: "Find onset" }).click();
    await page.getByText("First bad version").waitFor();
    await expect(page.locator(".onset-result").textContent()).resolves.toContain("v2");
    await screenshot(page, "rewind-1-point");

    // 1a. the midpoint, shown in the browser's zone, typed back as read: the request carries that very
    // instant (the same wall time read as UTC would be 5½ hours later, after the bad commit)
    const onset = await cp.client.onset(table("orders"), { predicate: "amount >= 100" });
    const midpoint = Date.parse(`${onset.rewind_timestamp!.replace(" ", "T")}Z`);
    const shown = (await page.locator(".onset-midpoint").textContent()) ?? "";
    expect(shown).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\+05:30$/);
    await page.getByLabel("Rewind timestamp").fill(shown.replace(" UTC+05:30", ""));
    await page.getByRole("button", { name: "Use this timestamp" }).click();
    await page.getByRole("button", { name: "Next" }).click();
    const started: string[] = [];
    const onRequest = (request: Request) => {
      if (request.method() === "POST" && request.url().endsWith("/updates"))
        started.push(request.postData()!);
    };
    page.on("request", onRequest);
    await page.getByRole("button", { name: "Next" }).click();
    const timestampPreview = page.getByRole("table", { name: "Affected datasets" });
    await timestampPreview.waitFor({ timeout: 120_000 });
    page.off("request", onRequest);
    const carried = (JSON.parse(started.at(-1)!) as { rewind_spec: { rewind_timestamp: string } }).rewind_spec
      .rewind_timestamp;
    expect(carried).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(Date.parse(carried)).toBe(midpoint);
    await expect(page.locator(".facts").textContent()).resolves.toContain(`rewind_timestamp: ${carried}`);
    const timestampCells = await timestampPreview.locator('tr[data-dataset="orders"] td').allTextContents();
    expect(timestampCells.slice(1, 3)).toEqual(["2", "1"]);
    await screenshot(page, "rewind-1a-timestamp-review");

    // 1b. back to the points: the dry run just made is no point on offer, and the onset's pick skips it
    await page.getByRole("button", { name: "Back" }).click();
    await page.getByRole("button", { name: "Back" }).click();
    await page.getByRole("combobox", { name: "Table" }).selectOption(table("orders"));
    await page.getByLabel("Bad rows where").fill("amount >= 100");
    await page.getByRole("button", { name: "Find onset" }).click();
    await page.getByText("First bad version").waitFor();
    await expect.poll(() => page.locator(".point .point-kind").allTextContents()).not.toContain("dry run");
    await page.getByRole("button", { name: /Use the newest point before the onset/ }).click();
    await expect(page.locator(".point-selected").textContent()).resolves.toContain("orders v2 → v1");
    await expect(page.locator(".point-selected .point-kind").textContent()).resolves.toBe("after update");
    await page.getByLabel(/Show dry runs' points/).check();
    await expect.poll(() => page.locator(".point .point-kind").allTextContents()).toContain("dry run");
    await page.getByLabel(/Show dry runs' points/).uncheck();
    await page.getByRole("button", { name: "Next" }).click();

    // 2. deselect and reselect in the list view; clearing the checkpoint reset is refused and locked
    await page.getByRole("button", { name: "List view" }).click();
    await page.getByRole("button", { name: "Clear" }).click();
    await expect(page.getByRole("button", { name: "Next" }).isDisabled()).resolves.toBe(true);
    await page.getByRole("checkbox", { name: "Include raw_orders" }).check();
    await expect(page.locator(".step").textContent()).resolves.toContain("2 more via cascade");
    await page.getByRole("checkbox", { name: "Reset all checkpoints" }).click(); // asks the API
    await page.getByText("Locked on:").waitFor();
    await expect(page.locator(".note-info").textContent()).resolves.toContain("auto_loader");
    await expect(page.getByRole("checkbox", { name: "Reset all checkpoints" }).isChecked()).resolves.toBe(
      true,
    );
    await page.getByRole("button", { name: "Graph view" }).click();
    await screenshot(page, "rewind-2-datasets");
    await expectAccessible();
    await page.getByRole("button", { name: "Next" }).click();

    // 3. the dry run's preview: every dataset version now → after, and what the rewind takes back
    const preview = page.getByRole("table", { name: "Affected datasets" });
    await preview.waitFor({ timeout: 120_000 });
    const ordersRow = preview.locator('tr[data-dataset="orders"]');
    const cells = await ordersRow.locator("td").allTextContents();
    expect(cells.slice(1, 3)).toEqual(["2", "1"]);
    const feed = await cp.client.changes(table("orders"), { starting_version: 2, ending_version: 2 });
    const inserted = feed.changes.filter((c) => c["_change_type"] === "insert").length;
    expect(inserted).toBe(2);
    await expect(ordersRow.locator('[data-count="inserted"]').textContent()).resolves.toBe(String(inserted));
    await expect(preview.locator("tbody tr").count()).resolves.toBe(3);
    await page.getByText("Rows the rewind takes back from orders").click();
    await screenshot(page, "rewind-3-review");
    await expectAccessible();

    // 4. confirm, watch it restore each dataset
    await page.getByRole("button", { name: "Rewind", exact: true }).click();
    await page.getByRole("dialog", { name: "Rewind now?" }).waitFor();
    await page.getByRole("button", { name: "Rewind 3 datasets" }).click();
    await page.getByText("Rewound.", { exact: false }).first().waitFor({ timeout: 120_000 });
    await expect.poll(() => page.locator(".progress-done").count()).toBe(3);
    await screenshot(page, "rewind-4-done");
    const orders = await cp.client.query(table("orders"), { sql: "SELECT count(*) AS n FROM t" });
    expect(orders.rows[0]!["n"]).toBe(3);
  });

  it("shows the pipeline as rewound with replay pending, and replays from the UI after the fix", async () => {
    await page.getByRole("button", { name: "Go to the pipeline" }).click();
    await page.locator(".note-rewound").waitFor();
    // the wizard's previews were dry runs: listed only when asked for
    const updates = page.getByRole("list", { name: "Updates" });
    await expect(updates.getByText("Rewind dry run").count()).resolves.toBe(0);
    await page.getByLabel(/Show rewind dry runs/).check();
    await expect.poll(() => updates.getByText("Rewind dry run").count()).toBeGreaterThan(0);
    await page.getByLabel(/Show rewind dry runs/).uncheck();
    // the rewound datasets are fetched after the pipeline itself: the node is marked once they arrive
    await expect
      .poll(() => page.locator('.graph-node[data-dataset="orders"]').textContent(), { timeout: 120_000 })
      .toContain("rewound");
    await screenshot(page, "pipeline-rewound");
    await cp.client.editPipeline(pipelineId, pipelineBody(cp.landing, CLEAN_GOOD));

    await page.getByRole("button", { name: "Replay" }).click();
    // the live view follows the replay without a reload
    const details = page.getByRole("region", { name: "Selected update" });
    await details.getByText("completed").first().waitFor({ timeout: 240_000 });
    await expect.poll(() => details.locator('tr[data-flow="clean"]').textContent()).toContain("caught up");
    await expect.poll(() => page.locator(".note-rewound").count()).toBe(0);
    await screenshot(page, "pipeline-replayed");

    const { rows } = await cp.client.query(table("orders"), { sql: "SELECT id, amount FROM t ORDER BY id" });
    expect(rows).toEqual([
      { id: 1, amount: 12.5 },
      { id: 2, amount: 40 },
      { id: 3, amount: 9.99 },
      { id: 4, amount: 20 },
      { id: 5, amount: 5 },
    ]);
  });

  it("fits a 375-px phone on every page: nothing scrolls sideways", async () => {
    const phone = await newPage(browser, {
      viewport: { width: 375, height: 812 },
      timezoneId: "Asia/Kolkata",
    });
    const widths: Record<string, number> = {};
    const measure = async (name: string) => {
      await phone.waitForLoadState("networkidle");
      widths[name] = (await phone.evaluate("document.documentElement.scrollWidth")) as number;
      await screenshot(phone, `phone-${name}`);
    };
    await phone.goto(`${cp.plane.endpoint}/`);
    await phone.getByLabel("Token").waitFor();
    await measure("login");
    await phone.getByLabel("Token").fill(cp.plane.token);
    await phone.getByRole("button", { name: "Sign in" }).click();
    await phone.getByRole("link", { name: `orders-${SCHEMA}` }).waitFor();
    await measure("pipelines");
    await phone.goto(`${cp.plane.endpoint}/pipelines/${pipelineId}`);
    await phone.locator('.graph-node[data-dataset="orders"]').waitFor();
    await measure("pipeline");
    await phone.getByRole("tab", { name: "Event log" }).click();
    await phone.locator("table.events tbody tr").first().waitFor();
    await measure("event-log");
    await phone.getByRole("tab", { name: "Definition" }).click();
    await measure("definition");
    await phone.goto(`${cp.plane.endpoint}/tables/${table("orders")}?pipeline=${pipelineId}`);
    await phone
      .getByRole("table", { name: "History" })
      .getByRole("cell", { name: "RESTORE", exact: true })
      .waitFor();
    await measure("table");
    await phone.goto(`${cp.plane.endpoint}/pipelines/${pipelineId}/rewind`);
    await phone.getByRole("button", { name: "Rewind to the latest point" }).click();
    await measure("rewind-point");
    await phone.getByRole("button", { name: "Next" }).click();
    await measure("rewind-datasets");
    await phone.getByRole("button", { name: "Next" }).click();
    await phone.getByRole("table", { name: "Affected datasets" }).waitFor({ timeout: 120_000 });
    await measure("rewind-review");
    await phone.context().close();
    expect(Object.entries(widths).filter(([, width]) => width > 375)).toEqual([]);
  });
});
