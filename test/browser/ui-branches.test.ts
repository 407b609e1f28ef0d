import { randomBytes } from "node:crypto";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { EbbApiError } from "../../shared/client/ebb-client.ts";
import { accessibilityProblems, launchBrowser, newPage, screenshot, UI_ASSETS } from "../support/browser.ts";
import { startTestControlPlane, type TestControlPlane } from "../support/control-plane.ts";
import { ordersTable } from "../support/orders-table.ts";

/**
 * Branches in a real browser against the real local runtime (docs/branches.md): after a bad deploy,
 * the user rehearses the rewind on a branch from the rewind page (a name the API would refuse is
 * caught in the form), lands on the branch's page, finds it in the pipeline's Branches tab (on the
 * second page: ten other branches come first), reads the diff per table (the counts are the API's:
 * whole rows on `orders`, rows changed by key on the AUTO CDC table `customers`), sees a publish
 * refused once live moved on (BRANCH_OUT_OF_DATE, the API's message naming the table), presses
 * Replay on the branch (the update it starts runs there),
 * and discards it. Then a fresh branch is published: the answer's rewind point is the way back.
 */

const TAG = randomBytes(3).toString("hex");
const CATALOG = "demo";
const SCHEMA = `brui_${TAG}`;
const NAME = `branches-${TAG}`;

const definition = (landing: string, ordersSql: string) => ({
  name: NAME,
  catalog: CATALOG,
  schema: SCHEMA,
  configuration: { "pipelines.rewind.enabled": "true" },
  definition: {
    datasets: [
      ordersTable(`${landing}/orders/`, ordersSql),
      {
        type: "streaming_table",
        name: "customers",
        flows: [
          {
            name: "customers_cdc",
            source: {
              type: "auto_loader",
              path: `${landing}/customers/`,
              format: "json",
              schema: { id: "BIGINT", city: "VARCHAR", seq: "BIGINT" },
            },
            sql: "SELECT * FROM source",
            auto_cdc: { keys: ["id"], sequence_by: "seq", stored_as_scd_type: 1 },
          },
        ],
      },
    ],
  },
});

describe("the web UI: a rewind rehearsed on a branch, compared, refused, discarded, published", () => {
  let cp: TestControlPlane;
  let browser: Browser;
  let page: Page;
  let pipelineId: string;
  let point: string;
  const orders = `${CATALOG}.${SCHEMA}.orders`;

  const run = async () => {
    const { update_id } = await cp.client.startUpdate(pipelineId, {});
    const update = await cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
    expect(update.state, update.error?.message).toBe("COMPLETED");
  };
  const expectAccessible = async () => expect(await accessibilityProblems(page)).toEqual([]);
  const refusal = async (call: Promise<unknown>) => {
    const error = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(EbbApiError);
    return error as EbbApiError;
  };

  beforeAll(async () => {
    cp = await startTestControlPlane({ uiAssets: UI_ASSETS });
    browser = await launchBrowser();
    page = await newPage(browser);
    await mkdir(path.join(cp.landing, "orders"));
    await mkdir(path.join(cp.landing, "customers"));
    ({ pipeline_id: pipelineId } = (await cp.client.createPipeline(
      definition(cp.landing, "SELECT id, amount FROM source"),
    )) as { pipeline_id: string });
    await cp.land("orders/1.json", [
      { id: 1, amount: 10 },
      { id: 2, amount: 20 },
    ]);
    await cp.land("customers/1.json", [
      { id: 1, city: "Oslo", seq: 1 },
      { id: 2, city: "Rome", seq: 1 },
    ]);
    await run();
    point = (await cp.client.rewindPoints(pipelineId)).rewind_points.find(
      (p) => p.kind !== "dry-run",
    )!.rewind_point_id;
    // The bad deploy (amounts doubled), and what live read since: a new order, a moved customer, a new one.
    await cp.client.editPipeline(
      pipelineId,
      definition(cp.landing, "SELECT id, amount * 2 AS amount FROM source"),
    );
    await cp.land("orders/2.json", [{ id: 3, amount: 30 }]);
    await cp.land("customers/2.json", [
      { id: 1, city: "Paris", seq: 2 },
      { id: 3, city: "Lima", seq: 2 },
    ]);
    await run();
    // Ten branches whose names sort first: the user's branch is on the listing's second page.
    for (let i = 0; i < 10; i++)
      await cp.client.createBranch(pipelineId, `aa-${i}`, { rewind_point_id: point });
  });

  afterEach(async (context) => {
    if (context.task.result?.state === "fail" && page)
      await screenshot(page, `failed-branch-${context.task.name.slice(0, 40)}`);
  });
  afterAll(async () => {
    await browser?.close();
    await cp?.close();
  });

  it("rehearses the rewind on a branch from the rewind page: a bad name caught, then the branch's page", async () => {
    await page.goto(`${cp.plane.endpoint}/#token=${encodeURIComponent(cp.plane.token)}`);
    await page.getByRole("link", { name: NAME }).click();
    await page.getByRole("button", { name: "More run options" }).click();
    await page.getByRole("menuitem", { name: "Rewind pipeline…" }).click();
    await page.locator(`label.point:has-text("${point}") input[type="radio"]`).check();
    await page.getByRole("button", { name: "Next" }).click();
    await page.getByRole("button", { name: "Next" }).click();
    const form = page.getByRole("form", { name: "Rehearse on a branch" });
    await form.waitFor();
    const field = form.getByLabel("Branch name");
    await field.fill("Fix 1");
    await expect(form.textContent()).resolves.toContain('"Fix 1" cannot name a branch');
    await expect(form.getByRole("button", { name: "Make the branch" }).isDisabled()).resolves.toBe(true);
    await expect(field.getAttribute("aria-invalid")).resolves.toBe("true");
    await field.fill("fix-1");
    await screenshot(page, "branch-1-rehearse");
    await expectAccessible();
    await form.getByRole("button", { name: "Make the branch" }).click();
    await page.getByRole("heading", { name: "Branch fix-1" }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/pipelines/${pipelineId}/branches/fix-1`);
    // What the API made: a branch at the point, live untouched.
    const { branch } = await cp.client.branch(pipelineId, "fix-1");
    expect(branch.rewind_point_id).toBe(point);
    const tables = page.getByRole("table", { name: "Branch tables" });
    for (const t of branch.tables) {
      await expect(tables.locator(`tr[data-table="${t.name}"] td`).allTextContents()).resolves.toEqual([
        t.name,
        t.from === "POINT" ? "the point" : "live as it was",
        String(t.source_version ?? "empty"),
        String(t.branch_version ?? "—"),
      ]);
    }
    await expect(page.locator(".facts-wide").textContent()).resolves.toContain(point);
  });

  it("shows the diff per table, its counts the API's, with samples up to max_samples", async () => {
    const diff = await cp.client.branchDiff(pipelineId, "fix-1");
    expect(diff.tables.map((t) => t.name).sort()).toEqual([`${CATALOG}.${SCHEMA}.customers`, orders]);
    for (const t of diff.tables) {
      const region = page.getByRole("region", { name: `Diff of ${t.name}` });
      await expect(region.locator('[data-count="only_on_branch"]').textContent()).resolves.toBe(
        String(t.only_on_branch.count),
      );
      await expect(region.locator('[data-count="only_on_live"]').textContent()).resolves.toBe(
        String(t.only_on_live.count),
      );
      if (t.changed)
        await expect(region.locator('[data-count="changed"]').textContent()).resolves.toBe(
          String(t.changed.count),
        );
      else await expect(region.locator('[data-count="changed"]').count()).resolves.toBe(0);
    }
    const ordersDiff = diff.tables.find((t) => t.name === orders)!;
    expect(ordersDiff.only_on_live).toEqual({ count: 1, samples: [{ id: 3, amount: 60 }] });
    const customers = diff.tables.find((t) => t.name !== orders)!;
    expect(customers.keys).toEqual(["id"]);
    expect(customers.changed!.count).toBe(1);
    const ordersRegion = page.getByRole("region", { name: `Diff of ${orders}` });
    await expect(
      ordersRegion
        .getByRole("table", { name: "Only on live: samples" })
        .locator("tbody td")
        .allTextContents(),
    ).resolves.toEqual(["3", "60"]);
    const changed = page
      .getByRole("region", { name: `Diff of ${customers.name}` })
      .getByRole("table", { name: "Changed by key: samples" });
    await expect(changed.locator("tbody tr").count()).resolves.toBe(2);
    await expect(changed.textContent()).resolves.toContain("Paris");
    await expect(changed.textContent()).resolves.toContain("Oslo");
    // max_samples 0: the counts stay, the samples go.
    await page.getByLabel("Samples per kind").selectOption("0");
    await expect.poll(() => ordersRegion.getByRole("table").count()).toBe(0);
    await expect(ordersRegion.locator('[data-count="only_on_live"]').textContent()).resolves.toBe("1");
    await page.getByLabel("Samples per kind").selectOption("5");
    await ordersRegion.getByRole("table", { name: "Only on live: samples" }).waitFor();
    await screenshot(page, "branch-2-diff");
    await expectAccessible();
  });

  it("lists the branch in the pipeline's Branches tab, on the listing's second page", async () => {
    await page
      .getByRole("navigation", { name: "Breadcrumb" })
      .getByRole("link", { name: "Branches", exact: true })
      .click();
    const list = page.getByRole("table", { name: "Branches" });
    await expect.poll(() => list.locator("tbody tr").count()).toBe(10);
    await expect(list.locator('tr[data-branch="fix-1"]').count()).resolves.toBe(0);
    await page.getByRole("button", { name: /^More branches/ }).click();
    await list.locator('tr[data-branch="fix-1"]').waitFor();
    await expect(list.locator("tbody tr").count()).resolves.toBe(11);
    await expect(page.getByRole("button", { name: /^More branches/ }).count()).resolves.toBe(0);
    await screenshot(page, "branch-3-list");
    await expectAccessible();
    await list.getByRole("link", { name: "fix-1" }).click();
    await page.getByRole("heading", { name: "Branch fix-1" }).waitFor();
  });

  it("shows a publish refused once live moved on: BRANCH_OUT_OF_DATE, the API's message naming the table", async () => {
    await cp.land("orders/3.json", [{ id: 4, amount: 40 }]);
    await run();
    const expected = await refusal(cp.client.publishBranch(pipelineId, "fix-1"));
    expect(expected.errorCode).toBe("BRANCH_OUT_OF_DATE");
    await page.getByRole("button", { name: "Publish…" }).click();
    const dialog = page.getByRole("dialog", { name: "Publish fix-1 to live?" });
    await dialog.getByRole("button", { name: "Publish fix-1" }).click();
    const alert = dialog.getByRole("alert");
    await alert.waitFor();
    const text = (await alert.textContent()) ?? "";
    expect(text).toContain(expected.message);
    expect(text).toContain(orders);
    expect(text).toContain("BRANCH_OUT_OF_DATE");
    await screenshot(page, "branch-4-refused");
    await expectAccessible();
    await dialog.getByRole("button", { name: "Cancel" }).click();
    const live = await cp.client.query(orders, { sql: "SELECT id FROM t ORDER BY id" });
    expect(live.rows.map((r) => Number(r["id"]))).toEqual([1, 2, 3, 4]);
  });

  it("replays on the branch: the update it starts runs on the branch", async () => {
    await page.getByRole("button", { name: "Replay on this branch" }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get("update")).toBeTruthy();
    const updateId = new URL(page.url()).searchParams.get("update")!;
    const update = await cp.client.waitForUpdate(pipelineId, updateId, { intervalMs: 200 });
    expect([update.state, update.branch]).toEqual(["COMPLETED", "fix-1"]);
    await page.goto(`${cp.plane.endpoint}/pipelines/${pipelineId}/branches/fix-1`);
  });

  it("discards the branch on confirmation: gone from the list and the API", async () => {
    await page.getByRole("button", { name: "Discard…" }).click();
    await page
      .getByRole("dialog", { name: "Discard fix-1?" })
      .getByRole("button", { name: "Discard fix-1" })
      .click();
    await page.getByRole("tab", { name: "Branches", selected: true }).waitFor();
    await page.getByRole("table", { name: "Branches" }).waitFor();
    const more = page.getByRole("button", { name: /^More branches/ });
    while ((await more.count()) > 0) {
      await more.click();
      await expect.poll(() => page.getByRole("button", { name: "Loading…" }).count()).toBe(0);
    }
    await expect(page.locator("tr[data-branch]").count()).resolves.toBe(10);
    await expect(page.locator('tr[data-branch="fix-1"]').count()).resolves.toBe(0);
    const gone = await refusal(cp.client.branch(pipelineId, "fix-1"));
    expect(gone.errorCode).toBe("BRANCH_NOT_FOUND");
  });

  it("publishes a branch of live as it is: the answer's versions, and its rewind point as the way back", async () => {
    const newest = (await cp.client.rewindPoints(pipelineId)).rewind_points.find(
      (p) => p.kind !== "dry-run",
    )!;
    await cp.client.createBranch(pipelineId, "fresh", { rewind_point_id: newest.rewind_point_id });
    await page.goto(`${cp.plane.endpoint}/pipelines/${pipelineId}/branches/fresh`);
    await page.getByRole("button", { name: "Publish…" }).click();
    await page
      .getByRole("dialog", { name: "Publish fresh to live?" })
      .getByRole("button", { name: "Publish fresh" })
      .click();
    const note = page.getByRole("status").filter({ hasText: "Published." });
    await note.waitFor();
    // The publish is an update: its event comes when it ends.
    await expect
      .poll(
        async () =>
          (await cp.client.events(pipelineId, { filter: "event_type = 'branch_published'" })).events.length,
        { timeout: 180_000 },
      )
      .toBe(1);
    const back = note.getByRole("link").last();
    const wayBack = await back.textContent();
    const points = (await cp.client.rewindPoints(pipelineId)).rewind_points.map((p) => p.rewind_point_id);
    expect(points).toContain(wayBack);
    await screenshot(page, "branch-5-published");
    await expectAccessible();
    await back.click();
    await page.getByRole("heading", { name: `Rewind ${NAME}` }).waitFor();
    await expect(page.locator(".point-selected").textContent()).resolves.toContain(wayBack!);
  });

  it("fits a 375-px phone: the branch page and the list scroll only inside their tables", async () => {
    const phone = await newPage(browser, { viewport: { width: 375, height: 812 } });
    await phone.goto(`${cp.plane.endpoint}/`);
    await phone.getByLabel("Token").fill(cp.plane.token);
    await phone.getByRole("button", { name: "Sign in" }).click();
    await phone.getByRole("link", { name: NAME }).waitFor();
    await phone.goto(`${cp.plane.endpoint}/pipelines/${pipelineId}/branches/aa-0`);
    await phone.getByRole("region", { name: `Diff of ${orders}` }).waitFor({ timeout: 120_000 });
    await screenshot(phone, "phone-branch");
    const branchWidth = (await phone.evaluate("document.documentElement.scrollWidth")) as number;
    await phone.goto(`${cp.plane.endpoint}/pipelines/${pipelineId}?tab=branches`);
    await phone.getByRole("table", { name: "Branches" }).waitFor();
    const listWidth = (await phone.evaluate("document.documentElement.scrollWidth")) as number;
    await phone.context().close();
    expect(branchWidth).toBeLessThanOrEqual(375);
    expect(listWidth).toBeLessThanOrEqual(375);
  });
});
