import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

/** `conveyor run` with a run flag given a value, as a script might write it: the real CLI in a child process. */
const dir = mkdtempSync(path.join(tmpdir(), "conveyor-run-flags-"));
const dataDir = path.join(dir, "data");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const definition = path.join(dir, "local.json");
const feed = path.join(dir, "local-7.csv");
writeFileSync(definition, JSON.stringify({
  name: "Local feed", slug: "local-feed", active: true, schedule: "0 * * * *", type: "products", action: "import",
  file_configs: [{ name: "local-\\d+\\.csv", identifier: "guid", create: "add", field_map: { guid: "guid", title: "title", stock: "stock" } }],
}));
writeFileSync(feed, "guid,title,stock\nL1,Local part,4\n");

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

describe("conveyor run: strict run flags", () => {
  it.each([
    [["--debug=maybe"], /--debug takes 1, 0, true or false after "=", not "maybe"; nothing was run/],
    [["--debug="], /--debug takes 1, 0, true or false after "=", not an empty value/],
    [["--debug", "--force=yes please"], /--force takes 1, 0, true or false after "=", not "yes please"/],
    [["--debug", "maybe"], /--debug takes no separate value \("maybe" was read as another argument\)/],
  ])("refuses %j with exit 2 and a message naming the flag, and runs nothing", async (flags, message) => {
    const res = await conveyor(["run", definition, "--file", feed, ...flags]);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(message);
    expect(res.stdout).toBe("");
    // Refused before the worker opened: not even the data folder exists.
    expect(existsSync(dataDir)).toBe(false);
  }, 90_000);

  it("answers --json with the usage error as JSON on standard output", async () => {
    const res = await conveyor(["run", definition, "--json", "--notify=on"]);
    expect(res.code).toBe(2);
    expect(JSON.parse(res.stdout)).toMatchObject({ error: { code: "usage", message: expect.stringContaining("--notify takes 1, 0, true or false"), hint: expect.stringContaining("--notify=0") } });
  }, 60_000);

  it("takes --debug=true and --diff=0 as a script sets them from a variable", async () => {
    const res = await conveyor(["run", definition, "--file", feed, "--debug=true", "--diff=0", "--json"]);
    expect(res.stderr).toBe("");
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ mode: "debug", diff: false, outcome: "success" });
  }, 90_000);
});
