import { once } from "node:events";
import { rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readPointers } from "../../src/pointers/index.js";
import { newRoot, newScene } from "./crash-env.js";

/**
 * A `conveyor run` killed (SIGKILL) between reading its records and storing
 * its pointers: once after apply, before the snapshot and ledger commit, and
 * once after them, just before the pointers are written. Either way the
 * stored pointer is the one before the run, so the next run asks for the
 * same range again; that run then stores the new values.
 */
const root = newRoot();
let server: http.Server;
let records: Array<Record<string, string>> = [];
/** The `updated_since` each request asked for: the pointer as the run read it. */
const asked: string[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    asked.push(new URL(req.url ?? "/", "http://127.0.0.1").searchParams.get("updated_since") ?? "");
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify(records));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
});
afterAll(() => {
  server.close();
  rmSync(root, { recursive: true, force: true });
});

const record = (n: number, day: string): Record<string, string> => ({ sku: `P${n}`, title: `Pointer part ${n}`, updated_at: `2026-01-${day}T00:00:00Z` });

describe("a run killed between read and commit", () => {
  it.each([["after-apply"], ["before-pointers"]])("at %s leaves the pointer for the next run to read the same range", async (fault) => {
    const slug = `crash-pointers-${fault}`;
    const scene = newScene(root, { slug, connection: { path: "unused" } }, { CONVEYOR_ALLOW_PRIVATE_HOSTS: "true" });
    const { port } = server.address() as AddressInfo;
    // The scene's helper writes an sdsftp definition; this one reads the loopback API instead.
    writeFileSync(
      scene.definition,
      JSON.stringify({
        name: `Crash ${slug}`,
        slug,
        active: true,
        schedule: "0 * * * *",
        type: "products",
        action: "import",
        connection: { type: "http", address: `http://127.0.0.1:${port}/changes.json`, method: "GET", payload: { updated_since: "{{pointer.since}}" }, pointers: { since: { from: "updated_at", initial: "2026-01-01T00:00:00Z" } } },
        file_configs: [{ name: "changes.json", format: "json", identifier: "guid", create: "add", update: "edit", field_map: { guid: "sku", title: "title" } }],
      }),
    );

    records = [record(1, "02"), record(2, "03")];
    asked.length = 0;
    const first = await scene.cli(["run", scene.definition, "--json"]);
    expect(first.code, first.stderr + first.stdout).toBe(0);
    const since = (): Promise<string | undefined> => scene.withWorker(async (w) => (await readPointers(w.env.store, slug)).since);
    expect(await since()).toBe("2026-01-03T00:00:00Z");

    records = [record(2, "03"), record(3, "05"), record(4, "04")];
    const crashed = await scene.cli(["run", scene.definition, "--json"], { CONVEYOR_FAULT: fault });
    expect(crashed.signal, crashed.stderr).toBe("SIGKILL");
    expect(await since()).toBe("2026-01-03T00:00:00Z");

    const again = await scene.cli(["run", scene.definition, "--json"]);
    expect(again.code, again.stderr).toBe(0);
    expect((JSON.parse(again.stdout) as { outcome: string }).outcome).toBe("success");
    expect(await since()).toBe("2026-01-05T00:00:00Z");
    // The request itself: the run after the crash asked for the range the crashed run asked for.
    expect(asked).toEqual(["2026-01-01T00:00:00Z", "2026-01-03T00:00:00Z", "2026-01-03T00:00:00Z"]);
  }, 120_000);
});
