import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * A live CLI run against the embedded service whose creates lack a title:
 * the service refuses each record, and the reason reaches errors.csv, the
 * run record, the summary and `conveyor logs`.
 */
const dir = mkdtempSync(path.join(tmpdir(), "conveyor-failures-cli-"));
const dataDir = path.join(dir, "data");
const MESSAGE = "the title field is required to create an item";

function definition(slug: string, file: string, fieldMap: Record<string, string>): string {
  const target = path.join(dir, `${slug}.json`);
  writeFileSync(target, JSON.stringify({
    name: `Failures ${slug}`, slug, active: true, schedule: "0 * * * *", type: "products", action: "import",
    connection: { type: "sdsftp", path: "feeds" },
    file_configs: [{ name: file.replace(".", "\\."), identifier: "guid", create: "add", field_map: fieldMap }],
  }));
  return target;
}

function feed(name: string, text: string): void {
  const file = path.join(dataDir, "storage", "demo", "feeds", name);
  writeFileSync(file, text);
  utimesSync(file, new Date(Date.now() - 3600_000), new Date(Date.now() - 3600_000));
}

let untitled = "";
let mixed = "";

beforeAll(() => {
  mkdirSync(path.join(dataDir, "storage", "demo", "feeds"), { recursive: true });
  feed("untitled.csv", "guid,stock\nSKU-1,4\nSKU-2,5\n");
  feed("mixed.csv", "guid,title,stock\nOK-1,Good part,4\nNT-1,,5\n");
  untitled = definition("untitled", "untitled.csv", { guid: "guid", stock: "stock" });
  mixed = definition("mixed", "mixed.csv", { guid: "guid", title: "title", stock: "stock" });
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function conveyor(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "src/cli.ts", ...args],
      { env: { ...process.env, CONVEYOR_DATA_DIR: dataDir, CONVEYOR_READ_LIMIT: "100000", CONVEYOR_WRITE_LIMIT: "100000" }, timeout: 90_000 },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

interface RunJson {
  id: string;
  outcome: string;
  counts: { create: number; failed: number };
  error?: { code: string; message: string; hint?: string };
  failures?: Array<{ message: string; count: number; examples: string[] }>;
  debug_files: string[];
}

describe("a live run whose records the service refuses", () => {
  let run: RunJson;

  it("ends failed (exit 1) with an error that quotes the service and says what to do", async () => {
    const result = await conveyor(["run", untitled, "--json"]);
    expect(result.code, result.stderr).toBe(1);
    run = JSON.parse(result.stdout) as RunJson;
    expect(run.outcome).toBe("failed");
    expect(run.counts).toMatchObject({ create: 2, failed: 2 });
    expect(run.error?.code).toBe("records_failed");
    expect(run.error?.message).toBe(`2 records refused by the service: ${MESSAGE} (2: SKU-1, SKU-2)`);
    expect(run.error?.hint).toContain(`conveyor debug-files ${run.id} errors.csv`);
    expect(run.failures).toEqual([{ message: MESSAGE, count: 2, examples: ["SKU-1", "SKU-2"] }]);
    expect(run.debug_files).toContain("errors.csv");
  }, 90_000);

  it("writes errors.csv with each refused record's line, identifier and the service's message", async () => {
    const result = await conveyor(["debug-files", run.id, "errors.csv"]);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trim().split(/\r?\n/);
    expect(lines[0]).toBe("line,identifier,message");
    // Each with its line in the feed and the feed's name, as a row error has them.
    expect(lines.slice(1).sort()).toEqual([`2,SKU-1,"untitled.csv: cannot add guid ""SKU-1"": ${MESSAGE}"`, `3,SKU-2,"untitled.csv: cannot add guid ""SKU-2"": ${MESSAGE}"`]);
  }, 60_000);

  it("lists the run's log records with conveyor logs, by run id and by slug, as a table and as JSON", async () => {
    const [table, json, limited] = await Promise.all([
      conveyor(["logs", run.id]),
      conveyor(["logs", "untitled", "--json", "--identifier", "SKU-2"]),
      conveyor(["logs", run.id, "--limit", "1"]),
    ]);
    expect(table.code, table.stderr).toBe(0);
    for (const id of ["SKU-1", "SKU-2"]) expect(table.stdout).toMatch(new RegExp(`add\\s+│ ${id}\\s+│ error\\s+│ cannot add guid "${id}": the title field`));
    expect(table.stdout).toContain(`2 log records of run ${run.id}`);

    expect(json.code, json.stderr).toBe(0);
    const logs = JSON.parse(json.stdout) as Array<{ identifier: string; job_id: string; result: string; message: string }>;
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({ identifier: "SKU-2", job_id: run.id, result: "error" });
    expect(logs[0]?.message).toContain(MESSAGE);

    expect(limited.stdout).toContain("1 log record of run");
    expect(limited.stdout).toContain("--limit 1: there may be more");
  }, 90_000);

  it("refuses a bad --limit and an unknown run, and explains every flag in --help", async () => {
    const [bad, unknown, help] = await Promise.all([conveyor(["logs", run.id, "--limit", "0"]), conveyor(["logs", "no-such-thing"]), conveyor(["logs", "--help"])]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--limit must be a whole number from 1 to 1000, not 0");
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no run and no automation with runs is called "no-such-thing"');
    for (const flag of ["--identifier", "--limit", "--json"]) expect(help.stdout).toContain(flag);
  }, 90_000);
});

describe("a live run where some records stand and one is refused", () => {
  it("ends partial (exit 3) without an error, and the summary quotes the refusal", async () => {
    const result = await conveyor(["run", mixed]);
    expect(result.code, result.stderr).toBe(3);
    expect(result.stdout).toMatch(/outcome\s+│ partial/);
    expect(result.stdout).toContain("1 record failed, by the service's message:");
    expect(result.stdout).toContain(`  ${MESSAGE} (1: NT-1)`);
    expect(result.stdout).toMatch(/errors\.csv has each one: conveyor debug-files r\S+ errors\.csv/);
    expect(result.stdout).not.toMatch(/\b1 (reads|writes|bytes|records)\b/);
    expect(result.stdout).not.toContain("error (");
  }, 90_000);
});
