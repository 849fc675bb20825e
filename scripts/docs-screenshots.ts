/**
 * `npm run docs:screenshots`: the README's pictures of the operator console,
 * taken in headless Chromium (Debian's, as the browser tests use) on a fresh
 * daemon with the samples after a debug run and a live run of the
 * fixed-width sample. Writes docs/console-*.png, 1280 px wide.
 */
import { mkdirSync, statSync } from "node:fs";
import path from "node:path";
import type { Page } from "playwright-core";
import { waitForRun } from "../test/daemon/daemon-harness.js";
import { launchBrowser, newAccountContext, signIn } from "../test/console/browser.js";
import { automationNamed, startSampleDaemon } from "../test/console/sample-daemon.js";

const DOCS = path.resolve(import.meta.dirname, "..", "docs");
const MAX_BYTES = 300 * 1024;

async function capture(page: Page, url: string, name: string): Promise<void> {
  await page.goto(url);
  const file = path.join(DOCS, `console-${name}.png`);
  await page.screenshot({ path: file });
  const size = statSync(file).size;
  if (size > MAX_BYTES) throw new Error(`${file} is ${Math.round(size / 1024)} KB, over the ${MAX_BYTES / 1024} KB the README's pictures may take`);
  process.stdout.write(`${path.relative(process.cwd(), file)}  ${Math.round(size / 1024)} KB\n`);
}

/** Clicks a run button on the automation page and waits until that run has finished; its id. */
async function runFromPage(page: Page, t: Awaited<ReturnType<typeof startSampleDaemon>>, button: string): Promise<string> {
  // Run live asks first (data-confirm); Debug run does not.
  if (button === "Run live") page.once("dialog", (dialog) => void dialog.accept());
  await page.getByRole("button", { name: button }).click();
  await page.waitForURL(/\/runs\/[^/]+$/);
  const id = decodeURIComponent(new URL(page.url()).pathname.split("/").pop() ?? "");
  await waitForRun(t, id, 60_000);
  return id;
}

async function main(): Promise<void> {
  mkdirSync(DOCS, { recursive: true });
  const [t, browser] = await Promise.all([startSampleDaemon(), launchBrowser()]);
  try {
    const base = t.daemon.url;
    const page = await (await newAccountContext(browser, { width: 1280, height: 860 })).newPage();
    await signIn(page, base, t.headers["X-Auth-User"] ?? "", t.headers["X-Auth-Token"] ?? "");
    const fixed = await automationNamed(t, "Bolt & Nut – mainframe");
    const automation = `${base}/automations/custom/${fixed.id}`;
    await page.goto(automation);
    const debugRun = await runFromPage(page, t, "Debug run");
    await page.goto(automation);
    await runFromPage(page, t, "Run live");

    await capture(page, `${base}/automations`, "automations");
    await capture(page, automation, "automation");
    // The run page and the plan viewer come with the run-views branch; until it is merged they answer 404.
    const run = await page.goto(`${base}/runs/${encodeURIComponent(debugRun)}`);
    if (run?.ok()) {
      await capture(page, `${base}/runs/${encodeURIComponent(debugRun)}`, "run");
      const plan = page.getByRole("link", { name: /plan/i }).first();
      if ((await plan.count()) > 0) await capture(page, new URL((await plan.getAttribute("href")) ?? "", base).href, "plan");
    } else {
      process.stdout.write(`skipped run and plan: /runs/{id} answered ${run?.status() ?? "nothing"}\n`);
    }
    await capture(page, `${base}/logs?identifier=0000012345`, "logs");
    await capture(page, `${base}/health`, "health");
  } finally {
    await browser.close();
    await t.close();
  }
}

await main();
