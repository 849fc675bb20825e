import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderPlanPage } from "../../src/console/pages/plan.js";
import { renderRunPage } from "../../src/console/pages/run.js";
import { liveData, planPageData, runPageData, type RunDataDeps } from "../../src/console/run-data.js";
import { registerRunPages } from "../../src/console/run-routes.js";
import { SqliteStore } from "../../src/state/sqlite.js";
import { debugRun, writeDebugFiles } from "./plan-fixture.js";

let dir: string;
let store: SqliteStore;
let deps: RunDataDeps;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "conveyor-run-pages-"));
  store = new SqliteStore(path.join(dir, "state.db"), { dataDir: dir });
  deps = { store, dataDir: dir, automationName: async (key) => (key === "1" ? "Stock <feed>" : null) };
  const folder = mkdtempSync(path.join(tmpdir(), "conveyor-run-pages-files-"));
  await writeDebugFiles(folder, 400, 9);
  writeFileSync(path.join(folder, "summary.json"), JSON.stringify({ timings: [{ stage: "prepare", at: "2026-11-21T03:00:00.000Z" }, { stage: "fetch", at: "2026-11-21T03:00:01.500Z" }, { stage: "done", at: "2026-11-21T03:00:04.000Z" }] }));
  await store.createRun(
    debugRun("r-done", "demo", {
      trigger: "event",
      files: [{ name: "<img src=x onerror=alert(1)>.csv", size: 3_500_000, sha256: "ab".repeat(32) }],
      guard: { name: "remove_limit", message: "12 removals over remove_limit 10: nothing was written" },
      error: { code: "records_failed", message: "3 records failed", hint: "Fix the SKUs and run again" },
      failures: [{ message: "unknown brand", count: 3, examples: ["A1", "B2"] }],
      debug_files: ["errors.csv", "plan.csv", "source/<feed>.csv", "summary.json"],
    }),
  );
  await store.updateRun("r-done", { events: ["evt-1", "evt-<2>"] } as Parameters<SqliteStore["updateRun"]>[1]);
  for (const name of ["plan.csv", "errors.csv", "summary.json"]) await store.putDebugFile("r-done", name, path.join(folder, name));
  await store.createRun(debugRun("r-live", "demo", { finished: null, outcome: null, heartbeat: new Date().toISOString(), debug_files: [] }));
  await store.saveProgress("r-live", { stage: "apply", rows: 12_345, files: { done: 2, total: 5 }, rate: 4_321, at: new Date().toISOString() });
  await store.createRun(debugRun("r-other", "someone-else"));
  rmSync(folder, { recursive: true, force: true });
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("run page", () => {
  it("another account's run, or a malformed id, is not found", async () => {
    expect(await runPageData(deps, "demo", "r-other", {})).toBeNull();
    expect(await runPageData(deps, "demo", "../r-done", {})).toBeNull();
    expect(await planPageData(deps, "demo", "r-other", {})).toBeNull();
    expect(await liveData(deps, "demo", "r-other")).toBeNull();
  });

  it("shows outcome, trigger and events, what stopped it with the hint, timings, files with size and hash, debug files and errors with row numbers", async () => {
    const data = await runPageData(deps, "demo", "r-done", {});
    expect(data?.events).toEqual(["evt-1", "evt-<2>"]);
    expect(data?.timings.map((t) => t.seconds)).toEqual([1.5, 2.5, null]);
    const page = renderRunPage(data ?? expect.fail("no data"), { csrf: "t" }).value;
    expect(page).toContain("Stock &lt;feed&gt;");
    expect(page).toContain("<code>evt-&lt;2&gt;</code>");
    expect(page).toContain("Guard remove_limit:");
    expect(page).toContain("What to do:</strong> Fix the SKUs and run again");
    expect(page).toContain("3.3 MB");
    expect(page).toContain("ab".repeat(32));
    expect(page).toContain("&lt;img src=x onerror=alert(1)&gt;.csv");
    expect(page).not.toContain("<img");
    expect(page).toContain('href="/runs/r-done/plan"');
    expect(page).toContain('href="/runs/r-done/files/source/%3Cfeed%3E.csv" download');
    expect(page).toMatch(/<th scope="col">Row<\/th><th scope="col">Feed line<\/th>/);
    expect(page).toContain('<td class="num">1</td>');
    expect(page).toContain('aria-label="Error pages"');
    expect(page).not.toContain("data-live");
    // Every section is reachable by its heading.
    for (const id of ["summary-h", "stopped-h", "counts-h", "timings-h", "files-h", "failures-h", "debug-h", "errors-h"]) expect(page).toContain(`aria-labelledby="${id}"`);
  });

  it("a running run has the live block the script polls, and live.json says where it stands", async () => {
    const data = await runPageData(deps, "demo", "r-live", {});
    const page = renderRunPage(data ?? expect.fail("no data"), { csrf: "t", liveScript: "/assets/run-live.js" }).value;
    expect(page).toContain('data-live data-live-url="/runs/r-live/live.json"');
    expect(page).toContain('aria-live="polite" data-live-text>apply: 12,345 rows, 4,321 rows/s, 2 of 5 bulk files</p>');
    expect(page).toContain('<progress data-live-field="bar" aria-label="Bulk files sent" max="5" value="2">');
    expect(page).toContain('<script src="/assets/run-live.js" defer></script>');
    expect(await liveData(deps, "demo", "r-live")).toMatchObject({ state: "running", progress: { stage: "apply", rows: 12_345 } });
    expect(await liveData(deps, "demo", "r-done")).toMatchObject({ state: "finished", outcome: "success", progress: null });
  });
});

describe("plan viewer page", () => {
  it("has a labelled GET filter form, before → after with screen-reader text, and a keyboard pager", async () => {
    const data = await planPageData(deps, "demo", "r-done", { page: "2" });
    const page = renderPlanPage(data ?? expect.fail("no data"), { csrf: "t" }).value;
    expect(page).toContain('<form class="plan-filter" method="get" action="/runs/r-done/plan" role="search"');
    for (const id of ["f-action", "f-field", "f-identifier"]) expect(page).toContain(`<label for="${id}">`);
    expect(page).toMatch(/<option value="edit">edit \(\d+\)<\/option>/);
    expect(page).toMatch(/<del><span class="visually-hidden">before: <\/span>[^<]*<\/del> <span aria-hidden="true">→<\/span> <ins><span class="visually-hidden">after: <\/span>/);
    expect(page).toContain('<nav class="pager" aria-label="Plan pages">');
    expect(page).toContain('<a href="/runs/r-done/plan" rel="first">First</a>');
    expect(page).toContain('<a href="/runs/r-done/plan?page=3" rel="next">Next</a>');
    expect(page).toMatch(/<li aria-current="page">Page 2 of \d+<\/li>/);
  });

  it("keeps the filter in the pager's links and says how many match", async () => {
    const data = await planPageData(deps, "demo", "r-done", { field: "stock", action: "edit" });
    const page = renderPlanPage(data ?? expect.fail("no data"), { csrf: "t" }).value;
    expect(page).toContain('<option value="stock" selected>');
    expect(page).toMatch(/role="status">\d+ planned changes? match the filter/);
    const some = await planPageData(deps, "demo", "r-done", { identifier: "SKU-1*" });
    const filtered = renderPlanPage(some ?? expect.fail("no data"), { csrf: "t" }).value;
    expect(filtered).toContain('value="SKU-1*"');
    expect(filtered).toContain("/runs/r-done/plan?identifier=SKU-1*&amp;page=2");
    const none = await planPageData(deps, "demo", "r-done", { identifier: "nothing" });
    expect(renderPlanPage(none ?? expect.fail("no data"), { csrf: "t" }).value).toContain("No planned change matches.");
  });
});

describe("run routes", () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = Fastify();
    registerRunPages(
      app,
      { ...deps, account: (r) => String(r.headers["x-test-account"] ?? ""), csrf: () => "t", wrap: (_r, title, body) => `<title>${title}</title><main>${body.value}</main>`, liveScript: "/assets/run-live.js" },
      async (request, reply) => {
        if (!request.headers["x-test-account"]) await reply.code(303).header("Location", "/sign-in").send();
      },
    );
    await app.ready();
  });
  afterAll(async () => app.close());

  it("serve the pages, live.json and downloads behind the guard, and another account's run is a 404", async () => {
    const as = { "x-test-account": "demo" };
    expect((await app.inject({ url: "/runs/r-done" })).statusCode).toBe(303);
    const run = await app.inject({ url: "/runs/r-done", headers: as });
    expect(run.statusCode).toBe(200);
    expect(run.body).toContain("<title>Run r-done</title>");
    expect((await app.inject({ url: "/runs/r-done/plan?field=stock", headers: as })).body).toContain("Plan of run");
    const live = await app.inject({ url: "/runs/r-live/live.json", headers: as });
    expect(live.headers["cache-control"]).toBe("no-store");
    expect(live.json()).toMatchObject({ state: "running" });
    const file = await app.inject({ url: "/runs/r-done/files/errors.csv", headers: as });
    expect(file.headers["content-disposition"]).toBe('attachment; filename="errors.csv"');
    expect(file.body.startsWith("line,identifier,message")).toBe(true);
    expect((await app.inject({ url: "/runs/r-done/files/..%2Fstate.db", headers: as })).statusCode).toBe(400);
    for (const url of ["/runs/r-other", "/runs/r-other/plan", "/runs/r-other/live.json", "/runs/r-other/files/plan.csv"]) {
      expect((await app.inject({ url, headers: as })).statusCode, url).toBe(404);
    }
  });
});
