import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { ConnectionTestResult, Connector, RemoteFile, TransferResult } from "../../../connectors/types.js";
import { parseAutomation, type FileConfig } from "../../../src/definition/index.js";
import { chooseFiles, describeNothing } from "../../../src/pipeline/import/fetch.js";
import { SqliteStore } from "../../../src/state/sqlite.js";

/**
 * A server whose listing has no time (FTP without MLSD or MDTM): `min_age`
 * cannot tell a file's age, so the file is judged by its size across two listings.
 */
class UntimedListing implements Connector {
  readonly type = "ftp" as const;
  listings = 0;
  constructor(private readonly sizes: (listing: number) => Array<[string, number]>) {}
  async list(): Promise<RemoteFile[]> {
    this.listings += 1;
    return this.sizes(this.listings).map(([name, size]) => ({ name, path: name, size, modified: null }));
  }
  download(): Promise<TransferResult> {
    throw new Error("not used");
  }
  upload(): Promise<TransferResult> {
    throw new Error("not used");
  }
  delete(): Promise<void> {
    throw new Error("not used");
  }
  move(): Promise<string> {
    throw new Error("not used");
  }
  mkdir(): Promise<void> {
    throw new Error("not used");
  }
  test(): Promise<ConnectionTestResult> {
    throw new Error("not used");
  }
  async close(): Promise<void> {}
}

const dir = mkdtempSync(path.join(tmpdir(), "conveyor-untimed-"));
const store = new SqliteStore(path.join(dir, "state.db"));
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function fileConfig(minAge: number): FileConfig {
  const parsed = parseAutomation({
    name: "Untimed", active: true, schedule: "0 * * * *", type: "products", action: "import",
    connection: { type: "ftp", address: "ftp.test", username: "u", password: "p", path: "/" },
    file_configs: [{ name: "stock.*\\.csv", identifier: "guid", field_map: { guid: "guid" }, update: "edit", select: "all", min_age: minAge }],
  });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  const config = parsed.automation.file_configs[0];
  if (!config) throw new Error("no file config");
  return config;
}

const choose = (connector: Connector, minAge = 30) =>
  chooseFiles({ connector, config: fileConfig(minAge), store, ledger: "untimed#0", now: Date.now, stabilityPollMs: 10 });

describe("min_age on a listing without times", () => {
  it("leaves a file whose size changed between two listings for the next run, and takes the settled one", async () => {
    const connector = new UntimedListing((n) => [["stock-1.csv", 500], ["stock-2.csv", n === 1 ? 100 : 4096]]);
    const chosen = await choose(connector);
    expect(chosen.picked.map((f) => f.name)).toEqual(["stock-1.csv"]);
    expect(chosen.skipped.map((s) => [s.file.name, s.reason])).toEqual([["stock-2.csv", "still growing"]]);
    expect(connector.listings).toBe(2);
  });

  it("lists once when min_age is 0", async () => {
    const connector = new UntimedListing(() => [["stock-1.csv", 500]]);
    expect((await choose(connector, 0)).picked).toHaveLength(1);
    expect(connector.listings).toBe(1);
  });
});

describe("the note of a run with nothing to import", () => {
  it("names each reason a file was passed over, with counts and the first names", async () => {
    const connector = new UntimedListing((n) => [["readme.txt", 10], ["stock-1.csv", n === 1 ? 100 : 200], ["stock-2.csv", n === 1 ? 5 : 6]]);
    const chosen = await choose(connector);
    expect(chosen.picked).toEqual([]);
    expect(describeNothing(chosen, fileConfig(30))).toBe('no file to import: 3 listed, 1 not matching name "stock.*\\\\.csv" (readme.txt), 2 still growing (stock-1.csv, stock-2.csv)');
  });

  it("says the folder is empty", async () => {
    const chosen = await choose(new UntimedListing(() => []));
    expect(describeNothing(chosen, fileConfig(30))).toBe("no file to import: the folder is empty");
  });
});
