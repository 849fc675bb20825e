import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestDaemon } from "../daemon/daemon-harness.js";
import { axe, focused, launchBrowser, newAccountContext, screenshot, signIn } from "./browser.js";
import { automationNamed, customAutomations, startSampleDaemon, type AutomationRef } from "./sample-daemon.js";

/**
 * Who may see and change what, in a browser: a second account, a forged
 * form on another site, sign-out; and the console used with a keyboard and
 * on a phone.
 */

let t: TestDaemon;
let browser: Browser;
let base = "";
let evil: Server;
let evilPort = 0;
let target: AutomationRef;
const user = (): string => t.headers["X-Auth-User"] ?? "";
const token = (): string => t.headers["X-Auth-Token"] ?? "";

/** A page of another site that posts a form to the console as soon as it loads, with a guessed CSRF token. */
function forgedPage(action: string): string {
  return `<!doctype html><html lang="en"><body><form method="post" action="${action}"><input type="hidden" name="_csrf" value="guessed"><input type="hidden" name="active" value="0"></form><script>document.forms[0].submit()</script></body></html>`;
}

beforeAll(async () => {
  [t, browser] = await Promise.all([startSampleDaemon(), launchBrowser()]);
  base = t.daemon.url;
  target = await automationNamed(t, "Google Shopping");
  evil = createServer((_req, res) => {
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
    res.end(forgedPage(`${base}/automations/custom/${target.id}/active`));
  });
  await new Promise<void>((resolve) => evil.listen(0, "127.0.0.1", resolve));
  evilPort = (evil.address() as AddressInfo).port;
}, 60_000);

afterAll(async () => {
  await new Promise((resolve) => evil?.close(resolve));
  await browser?.close();
  await t?.close();
});

async function stillActive(): Promise<boolean> {
  const res = await t.request("GET", `/v3/automations/custom/${target.id}`);
  return (res.body.automation as { active: boolean }).active;
}

describe("the console's boundaries in a browser", () => {
  it("shows a second account none of the first's automations, and 404 on their URLs", async () => {
    const bobToken = await t.daemon.accounts.add("bob", undefined, "test");
    const context = await newAccountContext(browser);
    const page = await context.newPage();
    await signIn(page, base, "bob", bobToken);
    await expect.poll(() => page.getByText("This account has no automations yet.").count()).toBe(1);
    const html = await page.content();
    for (const a of await customAutomations(t)) expect(html).not.toContain(a.name);
    await screenshot(page, "second-account");
    await axe(page);
    const other = await page.goto(`${base}/automations/custom/${target.id}`);
    expect(other?.status()).toBe(404);
    expect(await page.content()).not.toContain(target.name);
    await axe(page);
    await context.close();
  });

  it("refuses a form another site posts, whether the browser sends the cookie or not", async () => {
    const context = await newAccountContext(browser);
    const page = await context.newPage();
    await signIn(page, base, user(), token());
    // Another port of 127.0.0.1 is the same site: SameSite=Strict lets the cookie go, the Origin check refuses.
    const sameSite = page.waitForResponse((r) => r.request().method() === "POST");
    await page.goto(`http://127.0.0.1:${evilPort}/`);
    expect((await sameSite).status()).toBe(403);
    await page.waitForURL(`${base}/automations/custom/${target.id}/active`);
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Refused: sent from another site");
    expect(await page.getByRole("alert").textContent()).toContain(`http://127.0.0.1:${evilPort}`);
    await screenshot(page, "forged-post-refused");
    await axe(page);
    // localhost is another site: the cookie stays behind, and the Origin check refuses it first anyway.
    const crossSite = page.waitForResponse((r) => r.request().method() === "POST");
    await page.goto(`http://localhost:${evilPort}/`);
    const refused = await crossSite;
    expect(refused.status()).toBe(403);
    expect(await refused.request().headerValue("cookie")).toBeNull();
    expect(await stillActive()).toBe(true);
    await context.close();
  });

  it("signs out: the session's pages go back to the sign-in form", async () => {
    const context = await newAccountContext(browser);
    const page = await context.newPage();
    await signIn(page, base, user(), token());
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(`${base}/sign-in`);
    await page.goto(`${base}/automations`);
    expect(new URL(page.url()).pathname).toBe("/sign-in");
    expect((await context.cookies()).filter((c) => c.name === "conveyor_session")).toEqual([]);
    await context.close();
  });

  it("reaches the skip link first and every button and link with Tab", async () => {
    const context = await newAccountContext(browser);
    const page = await context.newPage();
    await signIn(page, base, user(), token());
    for (const path of ["/automations", `/automations/custom/${target.id}`]) {
      await page.goto(`${base}${path}`);
      await tabThrough(page);
    }
    await page.goto(`${base}/automations`);
    await page.keyboard.press("Tab");
    await screenshot(page, "skip-link-focused");
    await context.close();
  });

  it("fits a phone's width on the automations and automation pages", async () => {
    const context = await newAccountContext(browser, { width: 390, height: 844 });
    const page = await context.newPage();
    await signIn(page, base, user(), token());
    const acme = await automationNamed(t, "Acme Industrial");
    for (const [path, name] of [["/automations", "phone-automations"], [`/automations/custom/${acme.id}`, "phone-automation"]] as const) {
      await page.goto(`${base}${path}`);
      await screenshot(page, name);
      // Wide tables scroll inside their own region; the page itself must not scroll sideways.
      expect(await page.evaluate("document.documentElement.scrollWidth"), `${path} scrolls sideways`).toBeLessThanOrEqual(390);
      await axe(page);
    }
    await context.close();
  });
});

/** Tabs from the top of the page to its end: the skip link comes first, and every visible button and link is reached. */
async function tabThrough(page: Page): Promise<void> {
  // Numbers every button and link a sighted user sees (and the skip link, hidden until focused).
  const marked = (await page.evaluate(
    `(() => { const out = []; document.querySelectorAll("button, a[href]").forEach((e, i) => { if (e.offsetParent === null && !e.classList.contains("skip")) return; e.setAttribute("data-tab", String(i)); out.push(String(i) + " " + (e.textContent || "").trim()); }); return out; })()`,
  )) as string[];
  expect(marked.length, `${page.url()}: buttons and links`).toBeGreaterThan(5);
  await page.keyboard.press("Tab");
  expect(await focused(page), `${page.url()}: the first Tab`).toMatchObject({ tag: "a", text: "Skip to content", href: "#main" });
  const reached = new Set<string>();
  for (let i = 0; i < 300; i++) {
    const tab = (await page.evaluate(`document.activeElement ? document.activeElement.getAttribute("data-tab") : null`)) as string | null;
    if (tab !== null) reached.add(tab);
    await page.keyboard.press("Tab");
    if ((await focused(page)).tag === "body") break;
  }
  const missed = marked.filter((m) => !reached.has(m.split(" ")[0] ?? ""));
  expect(missed, `${page.url()}: Tab never reached these`).toEqual([]);
}
