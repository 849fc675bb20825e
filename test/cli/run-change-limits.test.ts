import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

/** A change limit as a person meets it: `conveyor run` stops a feed that zeroes every stock, says why, and `--force` applies it. */
const dir = mkdtempSync(path.join(tmpdir(), "conveyor-change-limits-"));
const dataDir = path.join(dir, "data");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const definition = path.join(dir, "stock.json");
writeFileSync(definition, JSON.stringify({
  name: "Supplier stock", slug: "supplier-stock", active: true, schedule: "0 * * * *", type: "products", action: "import",
  file_configs: [{ name: "stock-\\d+\\.csv", identifier: "guid", create: "add", update: "edit", field_map: { guid: "guid", title: "title", stock: "stock" } }],
}));

function feed(name: string, stock: (i: number) => string): string {
  const file = path.join(dir, name);
  const rows = Array.from({ length: 20 }, (_, i) => `S${i + 1},Part ${i + 1},${stock(i)}`);
  writeFileSync(file, ["guid,title,stock", ...rows].join("\n") + "\n");
  return file;
}

function conveyor(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "src/cli.ts", ...args],
      { env: { ...process.env, CONVEYOR_DATA_DIR: dataDir }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

describe("conveyor run and change_limits", () => {
  it("stops a feed with every stock zeroed with exit 1 and a message to act on; --force applies it", async () => {
    const first = await conveyor(["run", definition, "--file", feed("stock-1.csv", (i) => String(i + 3)), "--json"]);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ outcome: "success", counts: { create: 20 } });

    const zeroed = feed("stock-2.csv", () => "0");
    const stopped = await conveyor(["run", definition, "--file", zeroed]);
    expect(stopped.code).toBe(1);
    expect(stopped.stdout).toContain("stopped by guard change_limit: stock would go to zero or empty on 20 of the 20 records in scope (100%), over file_configs[0].change_limits.stock.zeroed 50% (S1 3 → 0, S2 4 → 0, S3 5 → 0, S4 6 → 0, S5 7 → 0, and 15 more): nothing was written.");
    expect(stopped.stdout).toContain("run again with --force");

    const forced = await conveyor(["run", definition, "--file", zeroed, "--force", "--json"]);
    expect(forced.code).toBe(0);
    const record = JSON.parse(forced.stdout) as { outcome: string; guard?: unknown; counts: { update: number } };
    expect(record).toMatchObject({ outcome: "success", counts: { update: 20 } });
    expect(record.guard).toBeUndefined();
  }, 120_000);
});
