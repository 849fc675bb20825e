import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import { SqliteStore } from "../../src/state/sqlite.js";
import { storeSuite } from "./store-suite.js";

storeSuite("sqlite", async () => new SqliteStore(path.join(mkdtempSync(path.join(tmpdir(), "conveyor-state-")), "state.db")));

it("sqlite state survives a reopen", async () => {
  const file = path.join(mkdtempSync(path.join(tmpdir(), "conveyor-state-")), "state.db");
  const a = new SqliteStore(file);
  await a.ledgerAdd("k", [{ path: "x", size: 1, modified: null }]);
  await a.close();
  const b = new SqliteStore(file);
  expect(await b.ledgerHas("k", { path: "x", size: 1, modified: null })).toBe(true);
  await b.close();
});
