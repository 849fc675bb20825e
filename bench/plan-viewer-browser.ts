/**
 * The browser half of `bench:plan-viewer`: Debian's Chromium, headless, signs
 * in to the console and pages through the plan viewer as a user does (next
 * page links, a jump by address, a filter), timing each page from the click to
 * its load, and reading the memory of the browser's renderer processes from
 * /proc: their proportional set size (PSS), so the libraries every Chromium
 * process maps are counted once, not once per process as RSS counts them.
 */
import { readdir, readFile } from "node:fs/promises";
import type { Page } from "playwright-core";
import { launchBrowser, newAccountContext, signIn } from "../test/console/browser.js";

export interface BrowserPage {
  name: string;
  ms: number;
  /** The largest renderer: the one showing the page (the others are Chromium's spare and utility renderers). */
  pagePssMb: number;
  rendererPssMb: number;
  renderers: number;
  heapMb: number;
}

async function rendererPss(): Promise<{ mb: number; count: number; largest: number }> {
  let total = 0;
  let count = 0;
  let largest = 0;
  for (const pid of await readdir("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const cmdline = await readFile(`/proc/${pid}/cmdline`, "utf8");
      if (!cmdline.includes("--type=renderer") || !cmdline.includes("playwright")) continue;
      const rollup = await readFile(`/proc/${pid}/smaps_rollup`, "utf8");
      const mb = Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0) / 1024;
      total += mb;
      largest = Math.max(largest, mb);
      count++;
    } catch {
      // The process ended while we looked.
    }
  }
  return { mb: total, count, largest };
}

async function heapMb(page: Page): Promise<number> {
  const session = await page.context().newCDPSession(page);
  await session.send("Performance.enable");
  const { metrics } = await session.send("Performance.getMetrics");
  await session.detach();
  return (metrics.find((m) => m.name === "JSHeapUsedSize")?.value ?? 0) / 1e6;
}

export async function browsePlan(base: string, user: string, token: string, runId: string, pages: number, log: (p: BrowserPage) => void): Promise<BrowserPage[]> {
  const browser = await launchBrowser();
  const out: BrowserPage[] = [];
  try {
    const context = await newAccountContext(browser);
    const page = await context.newPage();
    await signIn(page, base, user, token);
    const measure = async (name: string, go: () => Promise<unknown>): Promise<void> => {
      const t0 = performance.now();
      await go();
      await page.waitForLoadState("load");
      const ms = performance.now() - t0;
      const renderers = await rendererPss();
      const entry = { name, ms, pagePssMb: renderers.largest, rendererPssMb: renderers.mb, renderers: renderers.count, heapMb: await heapMb(page) };
      out.push(entry);
      log(entry);
    };
    const plan = `${base}/runs/${runId}/plan`;
    await measure("browser: first page", () => page.goto(plan));
    for (let i = 2; i <= 5; i++) await measure(`browser: next (${i})`, () => Promise.all([page.waitForURL(/page=/), page.getByRole("link", { name: /^next/i }).first().click()]));
    await measure("browser: last page", () => Promise.all([page.waitForURL(/page=/), page.getByRole("link", { name: /^last/i }).first().click()]));
    const middle = Math.ceil(pages / 2);
    await measure(`browser: page ${middle.toLocaleString("en")}`, () => page.goto(`${plan}?page=${middle}`));
    await measure("browser: filter field=stock", () => page.goto(`${plan}?field=stock`));
    await measure("browser: filter, next", () => Promise.all([page.waitForURL(/page=2/), page.getByRole("link", { name: /^next/i }).first().click()]));
  } finally {
    await browser.close();
  }
  return out;
}
