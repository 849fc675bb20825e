import { readdirSync, statSync } from "node:fs";
import { mkdir, mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestSftpServer } from "../../helpers/sftp-server.js";
import { TcpProxy } from "../../helpers/tcp-proxy.js";
import { automation, listing, openExportEnv, putProducts, run, type ExportEnv } from "./export-env.js";

/**
 * A 50 MB export over SFTP while a partner lists the folder every few
 * milliseconds: the final name only ever shows the whole file. An upload cut
 * mid-way (the link dies) leaves at most the temporary name, the run fails,
 * and the next run delivers.
 */
const PRODUCTS = 2_000;
const BIG = 27_000;
const PASSWORD = "partner-Pw-9";
const NAME = "catalogue.csv";

describe("atomic upload of an export", () => {
  let env: ExportEnv;
  let server: TestSftpServer;
  let root: string;
  const inbox = (): string => path.join(root, "drop");

  beforeAll(async () => {
    env = await openExportEnv();
    root = await mkdtemp(path.join(tmpdir(), "conveyor-sftp-atomic-"));
    await mkdir(inbox(), { recursive: true });
    server = await new TestSftpServer({ root, username: "partner", password: PASSWORD }).start();
    putProducts(
      env,
      Array.from({ length: PRODUCTS }, (_, i) => ({ guid: `G${i}`, sku: `S${i}`, description: `${String(i).padStart(6, "0")}${"lorem ipsum ".repeat(BIG / 12)}` })),
    );
  });

  afterAll(async () => {
    await server.close();
    await env.close();
    await rm(root, { recursive: true, force: true });
  });

  const def = (port: number) =>
    automation({
      name: "Big export",
      connection: { type: "sftp", address: "127.0.0.1", port, username: "partner", password: PASSWORD, path: "/drop" },
      file_configs: [{ name: NAME, field_map: { guid: "id", sku: "sku", description: "description" } }],
    });

  it("a partner polling the folder never sees a partial file under the final name", async () => {
    const seen: number[] = [];
    let partsSeen = 0;
    const poll = setInterval(() => {
      for (const name of readdirSync(inbox())) {
        if (name === NAME) seen.push(statSync(path.join(inbox(), name)).size);
        else if (name.endsWith(".part")) partsSeen++;
      }
    }, 2);
    const r = await run(env, def(server.port)).finally(() => clearInterval(poll));
    expect(r.error).toBeNull();
    expect(r.outcome).toBe("success");
    const size = (await stat(path.join(inbox(), NAME))).size;
    expect(size).toBeGreaterThan(50 * 2 ** 20);
    expect(r.files[0]?.size).toBe(size);
    // The upload was watched while it ran, and the final name never showed less than the whole file.
    expect(partsSeen).toBeGreaterThan(0);
    expect(seen.every((s) => s === size)).toBe(true);
    expect(await listing(inbox())).toEqual([NAME]);
  });

  it("an upload cut mid-way leaves no file under the final name; the next run delivers", async () => {
    await rm(path.join(inbox(), NAME));
    // Every product changes, so the diff run below has every row to send.
    putProducts(env, Array.from({ length: PRODUCTS }, (_, i) => ({ guid: `G${i}`, sku: `S${i}-v2` })));
    const proxy = await new TcpProxy(server.port).start();
    const part = path.join(inbox(), `.${NAME}.part`);
    // The link dies once 10 MB have reached the server: every socket reset, no reconnect possible.
    const cut = setInterval(() => {
      const size = (() => {
        try {
          return statSync(part).size;
        } catch {
          return 0;
        }
      })();
      if (size > 10 * 2 ** 20) {
        clearInterval(cut);
        void proxy.close();
      }
    }, 5);
    const failed = await run(env, def(proxy.port), { diff: true }).finally(() => clearInterval(cut));
    expect(failed.outcome).toBe("failed");
    expect(failed.error?.code).toMatch(/transfer|connect|timeout/);
    const left = await listing(inbox());
    expect(left).not.toContain(NAME);
    expect(left.every((n) => n === `.${NAME}.part`)).toBe(true);

    // Nothing was committed, so a diff run sends every row again, this time straight to the server.
    const next = await run(env, def(server.port), { diff: true });
    expect(next.error).toBeNull();
    expect(next.counts).toMatchObject({ rows: PRODUCTS, update: PRODUCTS });
    expect(await listing(inbox())).toEqual([NAME]);
    expect((await stat(path.join(inbox(), NAME))).size).toBe(next.files[0]?.size);
  });
});
