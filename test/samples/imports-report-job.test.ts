import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decryptValue, isEncrypted, type Automation } from "../../src/definition/index.js";
import { startPartnerApi, type PartnerApi } from "../../samples/partner-api.js";
import { debugRecords, expectNoChange, servicePicture } from "./expect-run.js";
import { filesContaining, itemsBySku, loadSample, openSampleEnv, runSample, seedProducts, type SampleEnv } from "./sample-env.js";

/**
 * samples/report-job-http.json against the partner API stand-in: the
 * triggers ask for a report and poll it until it is done, the import
 * downloads the CSV its answer links to. OAuth client credentials throughout.
 */
const SECRET = "report-Client-Secret-5521";

describe("samples/report-job-http.json", () => {
  let env: SampleEnv;
  let api: PartnerApi;

  beforeAll(async () => {
    env = await openSampleEnv();
    api = await startPartnerApi({ port: 0, clientSecret: SECRET, reportPolls: 2 });
    await seedProducts(env, [{ guid: "pa-1001", sku: "PA-1001", title: "Pallet jack", price: "399.00", stock: "2" }]);
  });

  afterAll(async () => {
    await api.close();
    await env.close();
  });

  /** The sample as shipped, polling every 50 ms instead of 2 s. */
  async function sample(): Promise<Automation> {
    const a = await loadSample("report-job-http.json", { "partner url": api.url, "client secret": SECRET });
    const poll = a.connection?.triggers?.[1]?.poll;
    if (poll) poll.interval = 0.05;
    return a;
  }

  it("debug run: the report is polled to done and its CSV planned, nothing changed", async () => {
    const before = await servicePicture(env);
    const run = await runSample(env, await sample(), "debug");
    expect(run.error).toBeNull();
    expect(run.counts).toMatchObject({ rows: 4, row_errors: 0, create: 3, update: 1 });
    expect(api.state.reports.get("rep-1")).toBe(3);
    expect(await debugRecords(env, run)).toEqual(expect.arrayContaining([expect.objectContaining({ sku: "PA-1003", title: 'Label printer "Z4", thermal', price: "615.00" })]));
    await expectNoChange(env, run, before);
  });

  it("live run: a second report job, and the service holds the report's prices and stock", async () => {
    const run = await runSample(env, await sample(), "prod");
    expect(run.error).toBeNull();
    expect(run.outcome).toBe("success");
    expect(api.state.reports.size).toBe(2);
    const items = await itemsBySku(env, ["PA-1001", "PA-1004"]);
    expect(items.get("PA-1001")).toMatchObject({ guid: "pa-1001", price: "389.00", stock: "4" });
    expect(items.get("PA-1004")).toMatchObject({ title: "Box cutter, 18 mm", price: "7.90", stock: "310" });
    // One token for both runs: it was kept in the automation's metadata.
    expect(api.state.tokenRequests).toBe(1);
  });

  it("no run record, debug file or database holds the client secret or the token (metadata keeps it sealed)", async () => {
    const token = await issuedToken();
    expect(token).toMatch(/^pt-/);
    expect(await filesContaining(env.settings.dataDir, SECRET)).toEqual([]);
    expect(await filesContaining(env.settings.dataDir, token)).toEqual([]);
    const runs = await env.worker.env.store.listRuns({ automation: (await sample()).slug });
    expect(runs).toHaveLength(2);
    for (const secret of [SECRET, token]) expect(JSON.stringify(runs)).not.toContain(secret);
  });

  /** The token the stand-in issued, as the automation's metadata keeps it. */
  async function issuedToken(): Promise<string> {
    const stored = await env.worker.env.store.getMetadata((await sample()).slug);
    const oauth = stored.oauth as { access_token?: string } | undefined;
    const key = env.worker.env.secretKey;
    const sealed = oauth?.access_token ?? "";
    return key && isEncrypted(sealed) ? decryptValue(sealed, key) : sealed;
  }
});
