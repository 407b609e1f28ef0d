import { randomBytes } from "node:crypto";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../support/control-plane.ts";
import { accessibilityProblems, launchBrowser, newPage, screenshot, UI_ASSETS } from "../support/browser.ts";

/**
 * The web UI's other pages in a real browser against the real local runtime: sign-in and sign-out,
 * creating a pipeline from YAML, a run started in the UI and followed live, its expectations' counts,
 * the event log's filters,
 * the table page, and a refusal the rewind wizard shows with the API's message.
 */

const SCHEMA = `uip_${randomBytes(3).toString("hex")}`;
const yaml = (landing: string) => `name: events-${SCHEMA}
catalog: demo
schema: ${SCHEMA}
configuration:
  pipelines.rewind.enabled: "true"
datasets:
  - type: streaming_table
    name: clicks
    expectations:
      - { name: early_id, condition: "id < 3" }
      - { name: known_page, condition: "page LIKE '/%'", on_violation: drop }
    flows:
      - name: ingest
        source:
          type: auto_loader
          path: ${landing}
          format: json
          schema: { id: BIGINT, page: VARCHAR }
        sql: SELECT * FROM source
  - type: materialized_view
    name: clicks_per_page
    sql: SELECT page, count(*) AS clicks FROM clicks GROUP BY page
`;

describe("the web UI's pages in a browser", () => {
  let cp: TestControlPlane;
  let browser: Browser;
  let page: Page;
  const expectAccessible = async () => expect(await accessibilityProblems(page)).toEqual([]);
  /**
   * Every 404 the app met (a page load asked for a missing file, or the server lost a route). A
   * pipeline deleted meanwhile is no such 404: the stand-ins' tables are shared with the test files
   * running at once, whose pipelines come and go in the listing.
   */
  const notFound: Promise<string | undefined>[] = [];

  beforeAll(async () => {
    cp = await startTestControlPlane({ uiAssets: UI_ASSETS });
    browser = await launchBrowser();
    page = await newPage(browser);
    page.on("response", (response) => {
      if (response.status() === 404)
        notFound.push(
          response
            .text()
            .then((body) => (body.includes('"RESOURCE_DOES_NOT_EXIST"') ? undefined : response.url()))
            .catch(() => response.url()),
        );
    });
    await cp.land("clicks-1.json", [
      { id: 1, page: "/home" },
      { id: 2, page: "/docs" },
      { id: 3, page: "/home" },
    ]);
  });
  afterEach(async (context) => {
    if (context.task.result?.state === "fail" && page)
      await screenshot(page, `failed-${context.task.name.slice(0, 40)}`);
  });
  afterAll(async () => {
    await browser?.close();
    await cp?.close();
  });

  it("asks for the token, refuses a wrong one, signs in with the right one and out again", async () => {
    await page.goto(`${cp.plane.endpoint}/`);
    await page.getByLabel("Token").fill("not-the-token");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").getByText("not this runtime's token").waitFor();
    await screenshot(page, "login");
    await expectAccessible();
    await page.getByLabel("Token").fill(cp.plane.token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Pipelines" }).waitFor();
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("Token").waitFor();
    expect((await page.context().cookies()).filter((c) => c.value !== "")).toEqual([]);
    await page.getByLabel("Token").fill(cp.plane.token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Pipelines" }).waitFor();
  });

  it("creates a pipeline from YAML, runs it from the page and follows the update live", async () => {
    await page.getByRole("button", { name: "Create pipeline" }).click();
    await page.getByLabel("Definition (YAML or JSON)").fill(yaml(cp.landing));
    await expectAccessible();
    await page.getByRole("dialog").getByRole("button", { name: "Create" }).click();
    await page.getByRole("heading", { name: new RegExp(`events-${SCHEMA}`) }).waitFor();

    await page.getByRole("button", { name: "Run pipeline" }).click();
    const details = page.getByRole("region", { name: "Selected update" });
    // The first state the page shows is not the last: the view follows the update without a reload.
    const seen = new Set<string>();
    const deadline = Date.now() + 240_000;
    while (Date.now() < deadline) {
      const state =
        (await details
          .locator(".update-details-header .badge")
          .textContent()
          .catch(() => null)) ?? "";
      if (state) seen.add(state);
      if (state === "completed" || state === "failed") break;
      await page.waitForTimeout(200);
    }
    expect([...seen].at(-1)).toBe("completed");
    expect(seen.size).toBeGreaterThan(1);
    await expect
      .poll(() => details.locator('tr[data-flow="ingest"]').textContent())
      .toMatch(/caught up.*3.*3/);
    await page.locator('.graph-node[data-dataset="clicks_per_page"]').getByText("2 rows").waitFor();
    await screenshot(page, "pipeline-run-live");
  });

  it("shows the update's expectations per dataset with the rows that passed and failed", async () => {
    const quality = page.getByRole("region", { name: "Data quality" });
    const row = (name: string) => quality.locator(`tr[data-expectation="${name}"]`);
    await expect.poll(() => row("clicks.early_id").textContent()).toBe("clicksearly_idwarn2133.3%");
    expect(await row("clicks.known_page").textContent()).toBe("clicksknown_pagedrop300.0%");
    await screenshot(page, "data-quality");
    await expectAccessible();
  });

  it("filters the event log by level and type, and shows a flow's progress without JSON", async () => {
    await page.getByRole("tab", { name: "Event log" }).click();
    const rows = page.locator("table.events tbody tr");
    await rows.first().waitFor();
    await page.getByRole("combobox", { name: "Type" }).selectOption("flow_progress");
    await page.getByText("filter: event_type = 'flow_progress'").waitFor();
    await expect
      .poll(
        async () =>
          new Set(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-event-type")))),
      )
      .toEqual(new Set(["flow_progress"]));
    // The streaming flow's progress (the view's refresh events carry other metrics).
    const ingest = rows.filter({ has: page.getByRole("cell", { name: "clicks", exact: true }) });
    await ingest.first().getByRole("button").click();
    await page.locator(".event-details dt", { hasText: "rowsOut" }).waitFor();
    await screenshot(page, "event-log");
    await expectAccessible();
    await page.getByText("ERROR", { exact: true }).click();
    await page.getByText("No events match.").waitFor();
  });

  it("shows a table's history, its rows as of a version, and its change feed", async () => {
    await page.getByRole("tab", { name: "Graph and updates" }).click();
    await page.getByRole("link", { name: `demo.${SCHEMA}.clicks`, exact: true }).click();
    const history = page.getByRole("table", { name: "History" });
    await history.getByText("CREATE TABLE").waitFor();
    await history.getByText("STREAMING UPDATE").waitFor();
    await page.getByLabel("As of version or timestamp").fill("1");
    await page.getByRole("button", { name: "Show rows" }).click();
    await page.getByText("Version 1 (").waitFor();
    await expect.poll(() => page.getByRole("table", { name: "Rows" }).locator("tbody tr").count()).toBe(3);
    await page.getByLabel("From version").fill("1");
    await page.getByRole("button", { name: "Show changes" }).click();
    await expect
      .poll(() => page.getByRole("table", { name: "Changes" }).locator("td.change-insert").count())
      .toBe(3);
    await screenshot(page, "table");
    await expectAccessible();
  });

  it("opens a table page again on reload, named under its pipeline, its history whole", async () => {
    await page.reload();
    const history = page.getByRole("table", { name: "History" });
    await history.getByText("CREATE TABLE").waitFor();
    await page
      .getByRole("navigation", { name: "Breadcrumb" })
      .getByRole("link", { name: `events-${SCHEMA}` })
      .waitFor();
    // The history has the page's width: none of its columns is cut off behind a scroll bar.
    const fits = await history.evaluate(
      (table) =>
        table.scrollWidth <= (table.parentElement?.clientWidth ?? 0) &&
        table.getBoundingClientRect().right <= (table.ownerDocument.defaultView?.innerWidth ?? 0),
    );
    expect(fits).toBe(true);
    expect((await Promise.all(notFound)).filter((url) => url !== undefined)).toEqual([]);
  });

  it("shows the refusal the API gives a rewind, with its message, before anything changes", async () => {
    await page.getByRole("link", { name: `events-${SCHEMA}`, exact: true }).click();
    await page.getByRole("button", { name: "More run options" }).click();
    await page.getByRole("menuitem", { name: "Rewind pipeline…" }).click();
    // A time still to come (the field refuses what is no time at all, before asking the API).
    await page.getByLabel("Rewind timestamp").fill("the day before yesterday");
    await expect(page.getByRole("button", { name: "Use this timestamp" }).isDisabled()).resolves.toBe(true);
    await page.getByLabel("Rewind timestamp").fill("2099-01-01 00:00:00");
    await page.getByRole("button", { name: "Use this timestamp" }).click();
    await page.getByRole("button", { name: "Next" }).click();
    await page.getByRole("button", { name: "Next" }).click();
    const refusal = page.getByRole("alert");
    await refusal.getByText("Ebb would refuse this rewind:").waitFor();
    await expect(refusal.textContent()).resolves.toContain("INVALID_REWIND_SPECIFICATION.INVALID_TIMESTAMP");
    await expect(page.getByRole("button", { name: "Rewind", exact: true }).isDisabled()).resolves.toBe(true);
    await screenshot(page, "rewind-refused");
    await expectAccessible();
  });
});
