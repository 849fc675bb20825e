import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadSettings } from "../../src/config.js";
import { metadataStore } from "../../src/pipeline/metadata.js";
import { readPointers, writePointers } from "../../src/pointers/index.js";
import { openStore, type StateStore } from "../../src/state/index.js";

/**
 * A connector's metadata (an OAuth token refreshed mid-run) and the pointers
 * (set by a committing run or an API PATCH) share one metadata body: each
 * write replaces only its own key, so neither puts back the other's old value.
 */
describe("metadata written key by key", () => {
  let dir: string;
  let store: StateStore;

  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("a token the connector stores keeps a pointer reset since the run began, and the other way round", async () => {
    dir = mkdtempSync(path.join(tmpdir(), "conveyor-metadata-"));
    store = await openStore(loadSettings({ cwd: dir, env: { CONVEYOR_DATA_DIR: dir } }));
    await writePointers(store, "a1", { since: "2026-01-05" });
    const key = Buffer.alloc(32, 7);
    const connector = await metadataStore(store, "a1", key);
    // The API resets the pointer while the run holds its copy of the metadata.
    await writePointers(store, "a1", { since: null });
    await connector.set("oauth", { access_token: "tok-refreshed-2718", expires_at: 1 });
    expect(await readPointers(store, "a1")).toEqual({});
    const stored = await store.getMetadata("a1");
    expect(JSON.stringify(stored)).not.toContain("tok-refreshed-2718");
    await writePointers(store, "a1", { since: "2026-02-01" });
    expect((await metadataStore(store, "a1", key)).get("oauth")).toEqual({ access_token: "tok-refreshed-2718", expires_at: 1 });
  });
});
