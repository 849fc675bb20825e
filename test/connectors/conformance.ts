import { mkdir } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConveyorError } from "../../src/errors.js";
import type { Connector, RemoteFile } from "../../connectors/types.js";
import {
  capturingContext, exists, randomFile, removeDir, sha256File, connectionFor, skipUnsupported, tempDir, type ConformanceTarget,
} from "./conformance-kit.js";
import { watchUpload } from "./conformance-watch.js";
import { registerFaultTests } from "./conformance-faults.js";

export { folderFiles, type Capability, type ConformanceTarget, type ServerFiles } from "./conformance-kit.js";

const BIG_DEFAULT = 50 * 1024 * 1024;
const FIXED_NOW = Date.UTC(2024, 0, 31, 23, 59, 58);

async function rejection(promise: Promise<unknown>): Promise<ConveyorError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, "the call should have failed").toBeInstanceOf(ConveyorError);
  return err as ConveyorError;
}

/**
 * The shared conformance suite: every connector runs it against its own real
 * server on loopback. `setup` starts the server; the suite owns everything else.
 *
 * To plug a connector in (see ftp-target.ts, sftp-target.ts):
 *   connectorConformance("http", async () => ({ connection, create: createHttpConnector,
 *     files: folderFiles(dirTheServerServes), loginAttempts, faults, refusals, close }));
 * `create` takes TransportOptions as a third argument (idle/connect timeout, retry
 * delay); `faults` and `refusals` are optional and their tests skip without them.
 */
export function connectorConformance(name: string, setup: () => Promise<ConformanceTarget>): void {
  describe(`${name} conformance`, () => {
    let target: ConformanceTarget;
    let connector: Connector;
    let local: string;
    const captured = capturingContext(() => FIXED_NOW);
    const errors: string[] = [];
    const track = async <T>(promise: Promise<T>): Promise<T> =>
      promise.catch((err: unknown) => {
        if (err instanceof ConveyorError) errors.push(JSON.stringify(err.toJSON()), err.describe(), String(err.stack));
        throw err;
      });

    const perFile: Connector[] = [];
    /** The shared connector, or for a one-file connection a connector naming `rel`. */
    const forFile = (rel: string, direction: "download" | "upload"): Connector => {
      if (!target.fileConnection) return connector;
      const made = target.create(connectionFor(target, rel, direction), captured.context);
      perFile.push(made);
      return made;
    };

    beforeAll(async () => {
      target = await setup();
      connector = target.create(target.connection, captured.context);
      local = await tempDir(`conformance-${name}`);
    });

    afterAll(async () => {
      await connector?.close();
      for (const c of perFile) await c.close();
      await target?.close();
      if (local) await removeDir(local);
    });

    it("tests the connection and reports facts without secrets", async () => {
      const result = await track(connector.test());
      expect(result.ok).toBe(true);
      expect(Object.keys(result.facts).length).toBeGreaterThan(0);
      expect(JSON.stringify(result.facts)).not.toContain(target.connection.password ?? "\u0000");
    });

    it("lists files of a folder with size and time, leaving folders out", async (ctx) => {
      skipUnsupported(ctx, target, "folders");
      const modified = new Date(Date.UTC(2024, 2, 5, 10, 20, 30));
      await target.files.write("list/a.csv", "x,y\n", modified);
      await target.files.write("list/b.txt", Buffer.alloc(1000, 7), modified);
      await target.files.write("list/sub/c.csv", "c");
      const files = await track(connector.list("list"));
      expect(files.map((f) => f.name).sort()).toEqual(["a.csv", "b.txt"]);
      const a = files.find((f) => f.name === "a.csv");
      expect(a).toMatchObject({ path: "list/a.csv", size: 4 });
      expect(files.find((f) => f.name === "b.txt")?.size).toBe(1000);
      if (target.listsModified !== false) {
        expect(a?.modified, "modification time").toBeInstanceOf(Date);
        expect(Math.abs((a?.modified?.getTime() ?? 0) - modified.getTime())).toBeLessThanOrEqual(60_000);
      }
      expect((await track(connector.list("list/sub"))).map((f) => f.path)).toEqual(["list/sub/c.csv"]);
    });

    it("round-trips a 50 MB file (or the target's transferSize) with its hash, atomically on upload", async () => {
      const BIG = target.transferSize ?? BIG_DEFAULT;
      const source = path.join(local, "src.bin");
      const hash = await randomFile(source, BIG);
      await target.files.put("big/big.bin", source);
      const listing = await track(forFile("big/big.bin", "download").list("big"));
      if (target.fileConnection) expect(listing, "a one-file connection lists its file").toHaveLength(1);
      const listed = listing.find((f) => f.name === "big.bin");
      expect(listed, "big.bin listed").toBeDefined();
      if (target.listsSize !== false) expect(listed?.size).toBe(BIG);
      const down = path.join(local, "down", "big.bin");
      // The caller owns its work folder; connectors are not asked to create local parents.
      await mkdir(path.dirname(down), { recursive: true });
      expect(await track(forFile("big/big.bin", "download").download(listed as RemoteFile, down))).toEqual({ size: BIG });
      expect(await sha256File(down)).toBe(hash);
      expect(await exists(`${down}.part`)).toBe(false);

      // A lister polling the server during the upload must never see a partial final file.
      const seen = await watchUpload(target, "up", "copy.bin", BIG, () => track(forFile("up/copy.bin", "upload").upload(down, "up/copy.bin")));
      expect(seen.result).toEqual({ size: BIG });
      if (target.unsupported?.atomicListing === undefined) {
        expect(seen.partial, "partial sightings of the final name").toBe(0);
        expect(seen.temp, "the upload should go through a temporary name").toBeGreaterThan(0);
      }
      expect(await target.files.hash("up/copy.bin")).toBe(hash);
      expect((await target.files.names("up")).filter((n) => n.endsWith(".part"))).toEqual([]);
    });

    it("replaces an existing file on upload", async (ctx) => {
      skipUnsupported(ctx, target, "replace");
      const first = path.join(local, "v1.txt");
      await randomFile(first, 10);
      const up = forFile("replace.txt", "upload");
      await track(up.upload(first, "replace.txt"));
      const second = path.join(local, "v2.txt");
      const hash = await randomFile(second, 20);
      await track(up.upload(second, "replace.txt"));
      expect(await target.files.hash("replace.txt")).toBe(hash);
    });

    it("says not_found for a missing file, without retrying", async () => {
      const dest = path.join(local, "missing.csv");
      const missing: RemoteFile = target.missingFile ?? { name: "missing.csv", path: "missing.csv", size: 10, modified: null };
      const err = await rejection(track(forFile("missing.csv", "download").download(missing, dest)));
      expect(err.code).toBe("not_found");
      expect(err.retryable).toBe(false);
      expect(await exists(dest)).toBe(false);
      expect(await exists(`${dest}.part`)).toBe(false);
    });

    it("says not_found for a missing folder", async (ctx) => {
      skipUnsupported(ctx, target, "missingFolder");
      expect((await rejection(track(connector.list("no-such-folder")))).code).toBe("not_found");
    });

    it("refuses paths that climb out of connection.path", async (ctx) => {
      skipUnsupported(ctx, target, "paths");
      const climb: RemoteFile = { name: "passwd", path: "../etc/passwd", size: 1, modified: null };
      expect((await rejection(connector.download(climb, path.join(local, "x")))).code).toBe("unsafe_path");
      expect((await rejection(connector.list("a/../../b"))).code).toBe("unsafe_path");
    });

    it("refuses an absolute remote path", async (ctx) => {
      skipUnsupported(ctx, target, "paths");
      skipUnsupported(ctx, target, "absolutePath");
      expect((await rejection(connector.upload(path.join(local, "v1.txt"), "/abs.txt"))).code).toBe("unsafe_path");
    });

    it("deletes a file", async (ctx) => {
      skipUnsupported(ctx, target, "delete");
      await target.files.write("ops/d.csv", "d");
      await track(connector.delete({ name: "d.csv", path: "ops/d.csv", size: 1, modified: null }));
      expect(await target.files.size("ops/d.csv")).toBeNull();
    });

    it("makes folders, twice without complaint", async (ctx) => {
      skipUnsupported(ctx, target, "mkdir");
      await track(connector.mkdir("ops/x/y"));
      await track(connector.mkdir("ops/x/y"));
      expect(await target.files.names("ops/x")).toEqual(["y"]);
    });

    it("moves with a timestamp when the target exists", async (ctx) => {
      skipUnsupported(ctx, target, "move");
      await target.files.write("ops/m.csv", "one");
      const file: RemoteFile = { name: "m.csv", path: "ops/m.csv", size: 3, modified: null };
      expect(await track(connector.move(file, "ops/archive"))).toBe("ops/archive/m.csv");
      await target.files.write("ops/m.csv", "two");
      expect(await track(connector.move(file, "ops/archive"))).toBe("ops/archive/m-20240131-235958.csv");
      expect((await target.files.names("ops/archive")).sort()).toEqual(["m-20240131-235958.csv", "m.csv"]);
      expect(await target.files.size("ops/m.csv")).toBeNull();
    });

    it("refuses a wrong password with one attempt and no retry", async (ctx) => {
      skipUnsupported(ctx, target, "password");
      const before = target.loginAttempts?.() ?? 0;
      const wrong = `wrong-${Math.random().toString(36).slice(2)}-pass`;
      const bad = target.create({ ...target.connection, password: wrong }, captured.context, { retryBaseDelayMs: 10 });
      // test(), not list(): a one-file connection lists without asking its server.
      const err = await rejection(track(bad.test()));
      await bad.close();
      expect(err.code).toBe("auth");
      expect(err.retryable).toBe(false);
      if (target.loginAttempts) expect(target.loginAttempts() - before).toBe(1);
      expect(err.describe()).not.toContain(wrong);
    });

    it("refuses connections that must not be trusted, without retrying", async (ctx) => {
      skipUnsupported(ctx, target, "refusals");
      if (!target.refusals?.length) return ctx.skip(`${name} setup supplies no refusals and declares none unsupported`);
      for (const refusal of target.refusals) {
        const refused = target.create({ ...target.connection, ...refusal.overrides }, captured.context, { retryBaseDelayMs: 10 });
        const err = await rejection(track(refused.test()));
        await refused.close();
        expect(err.code, refusal.name).toBe(refusal.code);
        expect(err.retryable, refusal.name).toBe(false);
      }
    });

    registerFaultTests(name, () => ({ target, local, captured, track }));

    it("keeps passwords out of errors and verbose logs", () => {
      const text = captured.lines.join("") + errors.join("\n");
      if (target.unsupported?.trace === undefined) expect(captured.lines.length).toBeGreaterThan(0);
      expect(text).not.toContain(target.connection.password ?? "\u0000");
      expect(text).not.toMatch(/wrong-[a-z0-9]+-pass/);
      if (target.traceMarker) expect(text).toMatch(target.traceMarker);
    });
  });
}
