import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestDaemon } from "../daemon/daemon-harness.js";
import { axe, launchBrowser, newAccountContext, screenshot, signIn } from "./browser.js";
import { debugRun, writeDebugFiles } from "./plan-fixture.js";
import { automationNamed, startSampleDaemon } from "./sample-daemon.js";

/** A debug run started from the console, watched to its summary, and its plan filtered and paged, in Chromium. */

let t: TestDaemon;
let browser: Browser;
let page: Page;
let base = "";
let runUrl = "";

beforeAll(async () => {
  [t, browser] = await Promise.all([startSampleDaemon(), launchBrowser()]);
  base = t.daemon.url;
  page = await (await newAccountContext(browser)).newPage();
  await signIn(page, base, t.headers["X-Auth-User"] ?? "", t.headers["X-Auth-Token"] ?? "");
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe("runs and plans in the console", () => {
  it("starts a debug run and shows its summary once it finishes", async () => {
    const fixed = await automationNamed(t, "Bolt & Nut – mainframe");
    await page.goto(`${base}/automations/custom/${fixed.id}`);
    await page.getByRole("button", { name: "Debug run" }).click();
    await page.waitForURL(/\/runs\/r\d{8}T\d{6}[^/]*$/);
    runUrl = page.url();
    // Live while it runs; the page's script reloads it with the summary when it finishes.
    await page.getByRole("heading", { name: "Summary" }).waitFor();
    await expect.poll(() => page.locator(".run-summary .outcome").textContent(), { timeout: 30_000 }).toBe("success");
    expect(await page.locator(".run-live").count()).toBe(0);
    await screenshot(page, "run");
    await axe(page);
  }, 45_000);

  it("opens the run's plan and filters it by action and field", async () => {
    await page.goto(runUrl);
    await page.getByRole("link", { name: "Open the plan viewer" }).click();
    await page.waitForURL(/\/plan$/);
    const rows = page.locator("table.plan tbody tr");
    const all = await rows.count();
    expect(all).toBeGreaterThan(0);
    expect(await page.locator("table.plan").textContent()).toContain("0000012345");
    await screenshot(page, "plan");
    await axe(page);

    await page.getByLabel("Field").selectOption("stock");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(/field=stock/);
    const stock = await rows.count();
    expect(stock).toBeGreaterThan(0);
    expect(stock).toBeLessThan(all);
    for (const cell of await page.locator("table.plan tbody tr td:nth-child(4)").allTextContents()) expect(cell).toBe("stock");
    await expect.poll(() => page.locator(".plan-count").textContent()).toMatch(/match the filter/);

    const action = (await page.locator("#f-action option").allTextContents()).map((o) => /^(\S+) \(\d+\)$/.exec(o)?.[1]).find((a) => a !== undefined);
    expect(action).toBeDefined();
    await page.getByLabel("Action").selectOption(action ?? "");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(/action=/);
    for (const cell of await page.locator("table.plan tbody tr td:nth-child(3)").allTextContents()) expect(cell).toBe(action);
    await axe(page);
  });

  it("pages through a plan of 400 operations with the keyboard-reachable pager", async () => {
    // A larger plan than the samples make, written by the pipeline's own writer into a run of this account.
    const folder = mkdtempSync(path.join(tmpdir(), "conveyor-browser-plan-"));
    await writeDebugFiles(folder, 400, 3);
    const account = t.headers["X-Auth-User"] ?? "";
    await t.daemon.store.createRun(debugRun("r-browser-big", account));
    for (const name of ["plan.csv", "errors.csv"]) await t.daemon.store.putDebugFile("r-browser-big", name, path.join(folder, name));
    rmSync(folder, { recursive: true, force: true });

    await page.goto(`${base}/runs/r-browser-big/plan`);
    const pager = page.getByRole("navigation", { name: "Plan pages" });
    const first = await page.locator("table.plan tbody tr td:first-child").first().textContent();
    await pager.getByRole("link", { name: "Next" }).focus();
    await page.keyboard.press("Enter");
    await page.waitForURL(/page=2/);
    await expect.poll(() => pager.locator('[aria-current="page"]').textContent()).toMatch(/^Page 2 of \d+$/);
    expect(await page.locator("table.plan tbody tr td:first-child").first().textContent()).not.toBe(first);
    await screenshot(page, "plan-page-2");
    await axe(page);
  });
});
