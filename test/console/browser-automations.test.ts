import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitForRun, type TestDaemon } from "../daemon/daemon-harness.js";
import { axe, launchBrowser, newAccountContext, screenshot, signIn } from "./browser.js";
import { automationNamed, customAutomations, startSampleDaemon } from "./sample-daemon.js";

/**
 * The console as an operator uses it, in headless Chromium on a daemon with
 * the samples: sign in, find an automation, read its masked definition,
 * change its parameters, debug-run and run it live. Every page passes axe.
 */

let t: TestDaemon;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let base = "";
const user = (): string => t.headers["X-Auth-User"] ?? "";
const token = (): string => t.headers["X-Auth-Token"] ?? "";
const RUN_URL = /\/runs\/r\d{8}T\d{6}[^/]*$/;

/** The product the fixed-width sample changes, as the embedded service answers it. */
async function product(guid: string): Promise<{ stock: string; cost: string }> {
  const res = await fetch(`${t.daemon.embedded?.url ?? ""}/v1/editor/items/edit?guid=${guid}`, { headers: t.headers });
  const found: Array<{ stock: string; cost: string }> = [];
  const visit = (value: unknown): void => {
    if (!value || typeof value !== "object") return;
    const record = value as Record<string, unknown>;
    if (record.guid === guid && "stock" in record) found.push({ stock: String(record.stock), cost: String(record.cost) });
    for (const child of Object.values(record)) visit(child);
  };
  visit(await res.json());
  const first = found[0];
  if (!first) throw new Error(`no product ${guid} in the service`);
  return first;
}

beforeAll(async () => {
  [t, browser] = await Promise.all([startSampleDaemon(), launchBrowser()]);
  base = t.daemon.url;
  context = await newAccountContext(browser);
  page = await context.newPage();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe("the console in a browser", () => {
  it("refuses a wrong token with a message, then signs in", async () => {
    await page.goto(`${base}/automations`);
    expect(new URL(page.url()).pathname).toBe("/sign-in");
    await axe(page);
    await page.getByLabel("API user").fill(user());
    await page.getByLabel("API token").fill("not-the-token");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("Wrong API user or token");
    await screenshot(page, "sign-in-refused");
    await axe(page);
    await signIn(page, base, user(), token());
    expect(new URL(page.url()).pathname).toBe("/automations");
  });

  it("lists every sample, and searches and filters them", async () => {
    const samples = await customAutomations(t);
    expect(samples.length).toBeGreaterThanOrEqual(10);
    const rows = page.locator("tbody tr");
    await expect.poll(() => rows.count()).toBe(samples.length);
    for (const s of samples) await expect.poll(() => page.getByRole("link", { name: s.name, exact: true }).count()).toBe(1);
    await screenshot(page, "automations");
    await axe(page);

    await page.getByLabel("Name").fill("bolt");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(/q=bolt/);
    const bolt = samples.filter((s) => s.name.toLowerCase().includes("bolt"));
    expect(await rows.count()).toBe(bolt.length);
    expect(await page.locator("caption").textContent()).toBe(`${bolt.length} of ${samples.length} automations`);

    await page.getByLabel("Name").fill("");
    await page.getByLabel("State").selectOption("inactive");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(/state=inactive/);
    const inactive = await page.locator("tbody .badge-inactive").count();
    expect(inactive).toBe(await rows.count());
    expect(inactive).toBeGreaterThan(0);
    await page.getByLabel("Last outcome").selectOption("failed");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(/outcome=failed/);
    await expect.poll(() => page.getByText("No automation matches these filters.").count()).toBe(1);
    await axe(page);
  });

  it("shows a definition with its secrets masked, and a new secret never comes back", async () => {
    const acme = await automationNamed(t, "Acme Industrial");
    await page.goto(`${base}/automations/custom/${acme.id}`);
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe(acme.name);
    expect(await page.content()).not.toContain("change-me-acme");
    expect(await page.locator("pre").textContent()).toContain("********");
    await screenshot(page, "automation");
    await axe(page);

    const secret = page.getByLabel("sftp password");
    expect(await secret.getAttribute("type")).toBe("password");
    expect(await secret.inputValue()).toBe("");
    await secret.fill("n3w-Secret-Value-42");
    await secret.locator("xpath=..").getByRole("button", { name: "Save" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toBe("Parameter saved.");
    expect(await page.content()).not.toContain("n3w-Secret-Value-42");
    const api = await t.request("GET", `/v3/automations/custom/${acme.id}`);
    expect(api.text).not.toContain("n3w-Secret-Value-42");

    // An encrypted parameter set through the API: stored sealed, never rendered.
    const json = await automationNamed(t, "Acme Pro");
    const put = await t.request("PUT", `/v3/automations/custom/${json.id}/parameters/api%20token`, { value: "enc-Token-Value-77", encrypted: true });
    expect(put.status).toBe(200);
    await page.goto(`${base}/automations/custom/${json.id}`);
    expect(await page.content()).not.toContain("enc-Token-Value-77");
    await expect.poll(() => page.getByText("secret: write-only; a value is set").count()).toBe(1);
  });

  it("saves a changed parameter", async () => {
    const fixed = await automationNamed(t, "Bolt & Nut – mainframe");
    await page.goto(`${base}/automations/custom/${fixed.id}`);
    const field = page.getByLabel("warehouse label");
    await field.fill("Mainframe hall B");
    await field.locator("xpath=..").getByRole("button", { name: "Save" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toBe("Parameter saved.");
    expect(await page.getByLabel("warehouse label").inputValue()).toBe("Mainframe hall B");
    const stored = await t.daemon.definitions.own(user(), "custom", fixed.id);
    expect(JSON.stringify(stored.body.parameters)).toContain("Mainframe hall B");
    await axe(page);
  });

  it("starts a debug run that lands on its run page, then a live run that changes the product", async () => {
    const fixed = await automationNamed(t, "Bolt & Nut – mainframe");
    await page.goto(`${base}/automations/custom/${fixed.id}`);
    await page.getByRole("button", { name: "Debug run" }).click();
    await page.waitForURL(RUN_URL);
    const debugId = decodeURIComponent(new URL(page.url()).pathname.split("/").pop() ?? "");
    const debug = await waitForRun(t, debugId, 30_000);
    expect(debug).toMatchObject({ state: "finished", outcome: "success" });
    expect(await product("bn-0000012345")).toEqual({ stock: "120", cost: "3.10" });

    await page.goto(`${base}/automations/custom/${fixed.id}`);
    // Run live asks first (data-confirm): the test answers yes, as the operator would.
    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Run live" }).click();
    await page.waitForURL(RUN_URL);
    const liveId = decodeURIComponent(new URL(page.url()).pathname.split("/").pop() ?? "");
    expect(liveId).not.toBe(debugId);
    const live = await waitForRun(t, liveId, 30_000);
    expect(live).toMatchObject({ outcome: "success" });
    expect(await product("bn-0000012345")).toEqual({ stock: "148", cost: "3.42" });

    await page.goto(`${base}/automations/custom/${fixed.id}`);
    await expect.poll(() => page.locator("figure.chart > svg[role=img]").count()).toBe(1);
    expect(await page.locator("#runs-caption").textContent()).toBe("The last 2 runs, newest first");
    await screenshot(page, "automation-after-runs");
    await axe(page);
  }, 60_000);

  it("has the logs and health pages, both accessible", async () => {
    await page.goto(`${base}/logs?identifier=0000012345`);
    await expect.poll(() => page.getByRole("heading", { level: 1 }).count()).toBe(1);
    await screenshot(page, "logs");
    await axe(page);
    await page.goto(`${base}/health`);
    await expect.poll(() => page.getByRole("heading", { name: "Health" }).count()).toBe(1);
    await screenshot(page, "health");
    await axe(page);
  });
});
