import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestFtpServer } from "../../helpers/ftp-server.js";
import { loadSample } from "../../samples/sample-env.js";
import { debugFolder, debugSource, listing, openExportEnv, putProducts, readBack, run, type ExportEnv } from "./export-env.js";

/**
 * samples/product-export-ftp.json against a real FTPS server (explicit TLS):
 * active products in stock, stock capped at 500, titles cut to 200, the
 * condition translated, as products-<date>.csv in /incoming/catalog.
 */
const PASSWORD = "shoprunner-Pw-77";
const LONG_TITLE = `Cordless drill, "pro" edition; ${"x".repeat(250)}`;

const PRODUCTS = [
  { guid: "g-1", sku: "SR-001", upc: "0012345678905", title: "Hose clamp, 1/2\"", brand: "Acme", price: "7.99", stock: "12", condition: "New", status: "Active", media1: "https://img.example/1.jpg" },
  { guid: "g-2", sku: "SR-002", upc: "0712345678901", title: LONG_TITLE, brand: "Acme Pro", price: "129.00", stock: "800", condition: "Used", status: "Active", media1: "" },
  { guid: "g-3", sku: "SR-003", upc: "713752E1", title: "  padded  ", brand: "Makita", price: "5", stock: "3", condition: "Refurbished", status: "Active", media1: "" },
  // Out of the search: out of stock, inactive.
  { guid: "g-4", sku: "SR-004", upc: "1", title: "Empty shelf", brand: "Acme", price: "1", stock: "0", condition: "New", status: "Active", media1: "" },
  { guid: "g-5", sku: "SR-005", upc: "2", title: "Retired", brand: "Acme", price: "1", stock: "9", condition: "New", status: "Inactive", media1: "" },
];

describe("samples/product-export-ftp.json", () => {
  let env: ExportEnv;
  let server: TestFtpServer;
  let root: string;
  const today = new Date().toISOString().slice(0, 10);

  beforeAll(async () => {
    env = await openExportEnv();
    root = await mkdtemp(path.join(tmpdir(), "conveyor-ftps-export-"));
    await mkdir(path.join(root, "incoming", "catalog"), { recursive: true });
    server = await new TestFtpServer({ root, username: "seller-55021", password: PASSWORD, tls: "explicit" }).start();
    putProducts(env, PRODUCTS);
  });

  afterAll(async () => {
    await server.close();
    await env.close();
    await rm(root, { recursive: true, force: true });
  });

  const sample = async () => {
    const a = await loadSample("product-export-ftp.json", { "ftp host": "127.0.0.1", "ftp port": String(server.port), "ftp user": "seller-55021", "ftp password": PASSWORD, "verify tls": "false" });
    a.timezone = "UTC";
    return a;
  };

  const expected = [
    { seller_sku: "SR-001", product_id: "0012345678905", item_name: 'Hose clamp, 1/2"', brand_name: "Acme", standard_price: "7.99", quantity: "12", condition_type: "new_new", main_image_url: "https://img.example/1.jpg" },
    { seller_sku: "SR-002", product_id: "0712345678901", item_name: LONG_TITLE.slice(0, 200), brand_name: "Acme Pro", standard_price: "129.00", quantity: "500", condition_type: "used_good", main_image_url: "" },
    { seller_sku: "SR-003", product_id: "713752E1", item_name: "  padded  ", brand_name: "Makita", standard_price: "5", quantity: "3", condition_type: "Refurbished", main_image_url: "" },
  ];

  it("debug run: renders the file into the debug folder, uploads nothing", async () => {
    const r = await run(env, await sample(), { mode: "debug" });
    expect(r.error).toBeNull();
    expect(r.outcome).toBe("success");
    expect(r.counts).toMatchObject({ rows: 3, create: 3, update: 0, unchanged: 0, row_errors: 0, failed: 0 });
    const name = `products-${today}.csv`;
    expect(r.debug_files).toEqual(expect.arrayContaining(["summary.json", "records.csv", `source/${name}`]));
    expect(await readBack(debugSource(env, r, name))).toEqual(expected);
    expect(await listing(path.join(root, "incoming", "catalog"))).toEqual([]);
    expect(await readFile(path.join(debugFolder(env, r), "records.csv"), "utf8")).toContain("SR-002");
  });

  it("live run: the partner's folder holds exactly the file, parsed back equal to the service's records", async () => {
    const r = await run(env, await sample());
    expect(r.error).toBeNull();
    expect(r.outcome).toBe("success");
    expect(r.counts).toMatchObject({ rows: 3, create: 3, failed: 0 });
    const name = `products-${today}.csv`;
    expect(await listing(path.join(root, "incoming", "catalog"))).toEqual([name]);
    const file = path.join(root, "incoming", "catalog", name);
    expect(await readBack(file)).toEqual(expected);
    const text = await readFile(file, "utf8");
    expect(text.split("\r\n")[0]).toBe("seller_sku,product_id,item_name,brand_name,standard_price,quantity,condition_type,main_image_url");
    expect(r.files).toEqual([expect.objectContaining({ name, size: Buffer.byteLength(text) })]);
    // The live run keeps no copy of the file in its debug folder.
    expect(existsSync(debugSource(env, r, name))).toBe(false);
  });

  it("nothing in the search: no file and the outcome is nothing", async () => {
    const a = await sample();
    const fc = a.file_configs[0];
    if (!fc) throw new Error("no file config");
    fc.search = "brand:=Nobody";
    fc.name = "empty-{{DATE}}.csv";
    const r = await run(env, a);
    expect(r.outcome).toBe("nothing");
    expect(await listing(path.join(root, "incoming", "catalog"))).not.toContain(`empty-${today}.csv`);
    // export_empty asks for a header-only file.
    fc.export_empty = true;
    const again = await run(env, a);
    expect(again.outcome).toBe("success");
    expect(await readFile(path.join(root, "incoming", "catalog", `empty-${today}.csv`), "utf8")).toBe(
      "seller_sku,product_id,item_name,brand_name,standard_price,quantity,condition_type,main_image_url\r\n",
    );
  });
});
