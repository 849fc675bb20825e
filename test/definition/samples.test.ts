import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import iconv from "iconv-lite";
import yauzl from "yauzl";
import { describe, expect, it } from "vitest";
import { compileNamePattern, loadAutomationFile, maskAutomation, resolveAutomation } from "../../src/definition/index.js";

/** The samples of samples/: each parses, resolves with its own parameters, and the storage ones find their files. */

const SAMPLES = path.resolve("samples");
const definitions = readdirSync(SAMPLES).filter((f) => f.endsWith(".json")).sort();

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

function zipEntries(file: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return reject(err ?? new Error("no zip"));
      const names: string[] = [];
      zip.on("entry", (e: yauzl.Entry) => {
        names.push(e.fileName);
        zip.readEntry();
      });
      zip.on("end", () => resolve(names));
      zip.on("error", reject);
      zip.readEntry();
    });
  });
}

describe("samples", () => {
  it("has the kinds of the issues", () => {
    expect(definitions).toEqual([
      "catalogue-zip-ftp.json",
      "fitment-export-storage.json",
      "fixed-width-storage.json",
      "json-api-http.json",
      "order-created-http.json",
      "order-export-sftp.json",
      "order-push-http.json",
      "price-list-xlsx-storage.json",
      "product-export-ftp.json",
      "report-job-http.json",
      "shopping-feed-storage.json",
      "supplier-stock-sftp.json",
      "tracking-api-http.json",
      "tracking-email.json",
      "xml-feed-http.json",
    ]);
  });

  it.each(definitions)("%s parses, resolves with its parameters and shows no password", async (file) => {
    const a = await loadAutomationFile(path.join(SAMPLES, file));
    const r = resolveAutomation(a, { runId: "sample-test", now: new Date("2026-03-01T12:00:00Z") });
    expect(JSON.stringify(r)).not.toMatch(/<<|\{\{(DATE|DATETIME|TIMESTAMP|RUN_ID)\}\}/);
    expect(a.parameters.length).toBeGreaterThan(0);
    const shown = JSON.stringify(maskAutomation(r));
    for (const p of a.parameters.filter((x) => /password|token/.test(x.name))) expect(shown).not.toContain(String(p.value));
    if (typeof r.connection?.port === "number") expect(Number.isInteger(r.connection.port)).toBe(true);
  });

  it("remote samples take their hosts and credentials from parameters; storage samples run as they are", async () => {
    for (const file of definitions) {
      const a = await loadAutomationFile(path.join(SAMPLES, file));
      const type = a.connection?.type;
      if (type === "sdsftp" || type === "sds3") {
        expect(a.active, file).toBe(true);
        continue;
      }
      expect(a.active, `${file} would fail on a fresh machine`).toBe(false);
      // An address a trigger finds (a report's download link) comes from a host the triggers name.
      const triggers = a.connection?.triggers ?? [];
      if (triggers.length > 0 && String(a.connection?.address).startsWith("{{trigger_value")) expect(String(a.connection?.address), file).toBe("{{trigger_value}}");
      // The host is a parameter: a whole address, or a base URL with the API's own path after it.
      else expect(String(a.connection?.address), `${file} address`).toMatch(/^<<[^<>]+>>(\/[\w/.-]*)?$/);
      for (const t of triggers) expect(t.address, `${file} trigger address`).toMatch(/^<<[^<>]+>>\//);
      const credential = a.connection?.password ?? a.connection?.headers?.Authorization ?? a.connection?.oauth?.client_secret;
      expect(credential, `${file} credential`).toMatch(/<<.+>>/);
      expect(a.parameters.some((p) => p.name.includes(" ")), file).toBe(true);
    }
  });

  it("storage imports find a matching file under samples/storage/<path>", async () => {
    for (const file of definitions) {
      const a = resolveAutomation(await loadAutomationFile(path.join(SAMPLES, file)), { runId: "t", now: new Date() });
      const conn = a.connection;
      if (a.action !== "import" || (conn?.type !== "sdsftp" && conn?.type !== "sds3")) continue;
      const names = filesUnder(path.join(SAMPLES, "storage", conn.path ?? "")).map((f) => path.basename(f));
      const pattern = compileNamePattern(a.file_configs[0]?.name ?? ".*");
      expect(names.filter((n) => pattern.test(n)), file).not.toHaveLength(0);
    }
  });

  it("keeps every sample file small", () => {
    for (const f of [...filesUnder(path.join(SAMPLES, "files")), ...filesUnder(path.join(SAMPLES, "storage"))]) {
      expect(statSync(f).size, f).toBeLessThan(100_000);
    }
  });

  it("has the traps suppliers set: BOM, 15 columns, leading zeros, long barcodes, 713752E1, quoted commas", () => {
    const csv = readFileSync(path.join(SAMPLES, "files/acme/inventory_20260301.csv"));
    expect([...csv.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const text = csv.toString("utf8");
    expect(text.split("\r\n")[0]?.split(",")).toHaveLength(15);
    for (const needle of ["000123", "0712345678901", "713752E1", '"Hose clamp, stainless, 1/2"" (10-pack)"']) expect(text).toContain(needle);
  });

  it("zips a windows-1252 TSV for the catalogue and writes a real workbook", async () => {
    const zip = path.join(SAMPLES, "files/northwind/catalogue_2026-03.zip");
    expect(await zipEntries(zip)).toEqual(["catalogue_2026-03.tsv"]);
    const xlsx = readFileSync(path.join(SAMPLES, "storage/pricelists/prices_2026-03.xlsx"));
    expect(xlsx.subarray(0, 2).toString()).toBe("PK");
    expect(iconv.decode(iconv.encode("Größe €", "windows-1252"), "windows-1252")).toBe("Größe €");
  });

  it("fixed-width lines are as wide as the offsets say", () => {
    const lines = readFileSync(path.join(SAMPLES, "storage/feeds/mainframe/STOCK_20260301.TXT"), "utf8").split("\r\n").filter((l) => l !== "");
    expect(lines[0]).toMatch(/^HDR/);
    for (const line of lines.slice(1)) expect(line).toHaveLength(72);
  });
});
