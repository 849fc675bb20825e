import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ServiceClient } from "../../../src/service/index.js";
import { csv, openHarness, type Harness } from "../harness.js";

/**
 * A product pass asks the service for its scope while its file downloads. The
 * feed's server holds the file back until the scope export has begun (or
 * five seconds have passed), so a run that read the scope only after the
 * download would be told apart by order, not by timing.
 */
describe("the scope read runs while the file downloads", () => {
  let h: Harness;
  let server: http.Server;
  let exportsStarted = 0;
  let status = 200;
  let heldBackUntilExport: boolean | null = null;
  const exportRecordPages = ServiceClient.prototype.exportRecordPages;

  beforeEach(async () => {
    h = await openHarness({ CONVEYOR_ALLOW_PRIVATE_HOSTS: "true" });
    exportsStarted = 0;
    status = 200;
    heldBackUntilExport = null;
    ServiceClient.prototype.exportRecordPages = function (this: ServiceClient, ...args: Parameters<ServiceClient["exportRecordPages"]>) {
      exportsStarted++;
      return exportRecordPages.apply(this, args);
    };
    server = http.createServer((_req, res) => {
      void (async () => {
        const deadline = Date.now() + 5000;
        while (exportsStarted === 0 && Date.now() < deadline) await sleep(10);
        heldBackUntilExport = exportsStarted > 0;
        res.statusCode = status;
        res.end(status === 200 ? csv(["guid", "title"], [["A1", "One"], ["A2", "Two"]]) : "gone");
      })();
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
  });

  afterEach(async () => {
    ServiceClient.prototype.exportRecordPages = exportRecordPages;
    server.close();
    await h.close();
  });

  function automation(): ReturnType<Harness["automation"]> {
    const { port } = server.address() as AddressInfo;
    return h.automation(
      { name: "feed.csv", field_map: { guid: "guid", title: "title" }, create: "add" },
      { connection: { type: "http", address: `http://127.0.0.1:${port}/feed.csv`, method: "GET", payload: {} } },
    );
  }

  it("asks for the scope before the download has finished, and plans with it", async () => {
    const run = await h.run(automation(), { mode: "debug" });
    expect(run.outcome).toBe("success");
    expect(heldBackUntilExport).toBe(true);
    expect(exportsStarted).toBe(1);
    expect(run.counts).toMatchObject({ rows: 2, create: 2 });
  });

  it("a download that fails stops the scope read and fails the run with the download's error", async () => {
    status = 404;
    const run = await h.run(automation(), { mode: "prod" });
    expect(run.outcome).toBe("failed");
    expect(run.error?.message).toMatch(/404/);
    expect(h.items().size).toBe(0);
  });
});
