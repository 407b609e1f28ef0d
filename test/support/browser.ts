import { existsSync } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type Page } from "playwright-core";

/**
 * A real browser for the UI tests: Debian's Chromium driven by playwright-core (no downloaded browser
 * build), headless, sandbox off as root, no background networking. Screenshots go to
 * `test-output/ui/` (not committed).
 */

export const CHROMIUM = process.env["EBB_CHROMIUM"] ?? "/usr/bin/chromium";
export const UI_ASSETS = fileURLToPath(new URL("../../ui/dist", import.meta.url));
const SCREENSHOTS = fileURLToPath(new URL("../../test-output/ui", import.meta.url));

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `no Chromium at ${CHROMIUM}: apt-get install chromium (.ci/run does), or set EBB_CHROMIUM`,
    );
  }
  if (!existsSync(path.join(UI_ASSETS, "index.html"))) {
    throw new Error("the web UI is not built: npm run build:ui (npm test does it first)");
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-background-networking", "--disable-dev-shm-usage"],
  });
}

export interface PageOptions {
  /** @default 1280 × 860 */
  readonly viewport?: { readonly width: number; readonly height: number };
  /** The browser's time zone (an IANA name). @default the machine's */
  readonly timezoneId?: string;
}

export async function newPage(browser: Browser, options: PageOptions = {}): Promise<Page> {
  const context = await browser.newContext({
    viewport: options.viewport ?? { width: 1280, height: 860 },
    ...(options.timezoneId ? { timezoneId: options.timezoneId } : {}),
  });
  const page = await context.newPage();
  // Under a heavy load a click that starts an update takes seconds to show its result.
  page.setDefaultTimeout(120_000);
  // An uncaught error in the app is a test failure's likeliest cause: say it where the test output is.
  page.on("pageerror", (error) => console.error(`browser page error: ${error.stack ?? error.message}`));
  return page;
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

interface AxeViolation {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  readonly nodes: readonly { readonly target: readonly unknown[] }[];
}

const require = createRequire(import.meta.url);

/** axe-core in the page: the serious and critical violations, described for an assertion message. */
export async function accessibilityProblems(page: Page): Promise<string[]> {
  const source = await readFile(require.resolve("axe-core/axe.min.js"), "utf8");
  await page.evaluate(source);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: AxeViolation[] }> } }).axe;
    return (await axe.run()).violations;
  });
  return violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map(
      (v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => JSON.stringify(n.target)).join(", ")}`,
    );
}
