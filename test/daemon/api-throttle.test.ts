import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestDaemon, type TestDaemon } from "./daemon-harness.js";

let t: TestDaemon;
beforeAll(async () => {
  t = await startTestDaemon({ daemon: { apiLimits: { read: 5, write: 5, options: 5 } } });
}, 60_000);
afterAll(async () => t.close());

describe("the daemon API's throttle", () => {
  it("counts a wrong token against the sender's address, never against the account it names", async () => {
    // The windows are wall-clock minutes: start well inside one.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 55_000) await new Promise((r) => setTimeout(r, 60_100 - intoMinute));
    // Seven guesses with the account's (public) user name: the address runs out of reads.
    const guesses: number[] = [];
    for (let i = 0; i < 7; i++) guesses.push((await t.request("GET", "/v3/automations/custom", undefined, { "X-Auth-User": t.daemon.defaultAccount?.apiUser ?? "demo", "X-Auth-Token": "wrong-token-123" })).status);
    expect(guesses).toEqual([401, 401, 401, 401, 401, 429, 429]);
    // The account's own budget is untouched: five reads pass, the sixth is throttled.
    const own: number[] = [];
    for (let i = 0; i < 6; i++) own.push((await t.request("GET", "/v3/automations/custom")).status);
    expect(own).toEqual([200, 200, 200, 200, 200, 429]);
  });
});
