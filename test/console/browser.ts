import { existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";

/**
 * Headless Chromium for the console's browser tests: Debian's chromium
 * (scripts/test-servers.sh installs it), driven by playwright-core, which
 * never downloads a browser of its own. One browser per test file, one
 * context (cookie jar) per account.
 */

const ROOT = path.resolve(import.meta.dirname, "../..");
export const CHROMIUM = process.env.CONVEYOR_CHROMIUM ?? "/usr/bin/chromium";
export const SCREENSHOTS = path.join(ROOT, "test-output", "screenshots");
const AXE = path.join(ROOT, "node_modules", "axe-core", "axe.min.js");

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: run scripts/test-servers.sh (it installs Debian's chromium) or set CONVEYOR_CHROMIUM`);
  // Chromium refuses its sandbox as root, which is how CI and the dev containers run.
  const root = typeof process.getuid === "function" && process.getuid() === 0;
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: root ? ["--no-sandbox"] : [] });
}

/** A fresh cookie jar: one per account, so sessions never mix. */
export async function newAccountContext(browser: Browser, viewport = { width: 1280, height: 900 }): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport, locale: "en-GB", timezoneId: "UTC" });
  context.setDefaultTimeout(15_000);
  return context;
}

/** Signs in through the form; resolves once the browser has left the sign-in page. */
export async function signIn(page: Page, base: string, user: string, token: string): Promise<void> {
  await page.goto(`${base}/sign-in`);
  await page.getByLabel("API user").fill(user);
  await page.getByLabel("API token").fill(token);
  await Promise.all([page.waitForURL((url) => !url.pathname.startsWith("/sign-in")), page.getByRole("button", { name: "Sign in" }).click()]);
}

/** A full-page PNG under test-output/screenshots/<name>.png; returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown[] }>;
}

let axeSource: string | null = null;

/**
 * Runs axe-core on the page as it is and fails on any serious or critical
 * violation, naming each rule and the elements it found. The console's CSP
 * (script-src 'self') blocks a `<script>` tag with inline content, which is
 * what addScriptTag({path}) inserts; evaluating the source over the DevTools
 * protocol is not subject to the page's CSP, so the served policy stays as
 * strict as it is for a user.
 */
export async function axe(page: Page): Promise<void> {
  axeSource ??= readFileSync(AXE, "utf8");
  const loaded = await page.evaluate(`(() => { ${axeSource}; return typeof axe === "object" ? true : typeof window.axe === "object"; })()`);
  if (loaded !== true) throw new Error("axe-core did not load into the page");
  const violations = (await page.evaluate(
    `(async () => { const a = window.axe ?? axe; const r = await a.run(document, { resultTypes: ["violations"] }); return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) })); })()`,
  )) as AxeViolation[];
  const bad = violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  if (bad.length > 0) {
    const lines = bad.map((v) => `${v.impact} ${v.id} (${v.help}): ${v.nodes.map((n) => JSON.stringify(n.target)).join(", ")}`);
    throw new Error(`axe found ${bad.length} serious or critical violation(s) on ${page.url()}:\n${lines.join("\n")}`);
  }
}

/** The element focused now, as `tag#id.class "text"`, for asserting the Tab order. */
export async function focused(page: Page): Promise<{ tag: string; text: string; href: string | null; className: string }> {
  return (await page.evaluate(
    `(() => { const e = document.activeElement; return { tag: e ? e.tagName.toLowerCase() : "", text: e ? (e.textContent || e.getAttribute("value") || "").trim() : "", href: e ? e.getAttribute("href") : null, className: e ? String(e.className) : "" }; })()`,
  )) as { tag: string; text: string; href: string | null; className: string };
}
