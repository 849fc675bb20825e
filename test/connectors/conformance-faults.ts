import { mkdir } from "node:fs/promises";
import path from "node:path";
import { expect, it } from "vitest";
import { ConveyorError } from "../../src/errors.js";
import type { ConnectorContext, RemoteFile } from "../../connectors/types.js";
import { connectionFor, exists, randomFile, sha256File, skipUnsupported, type ConformanceTarget, type DefectCheck } from "./conformance-kit.js";

const FAULT_FILE = 24 * 1024 * 1024;
const CUT_AFTER = 2 * 1024 * 1024;
/** Short enough that the slow-server test takes seconds, long enough for loopback. */
const FAST_TIMEOUTS = { idleTimeoutMs: 1_500, connectTimeoutMs: 3_000, retryBaseDelayMs: 20 };

interface FaultEnv {
  target: ConformanceTarget;
  local: string;
  captured: { context: ConnectorContext };
  track<T>(promise: Promise<T>): Promise<T>;
}

async function failure(promise: Promise<unknown>): Promise<ConveyorError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, "the call should have failed").toBeInstanceOf(ConveyorError);
  return err as ConveyorError;
}

/**
 * A declared known defect: while the connector still misbehaves the test runs
 * to its end and is then skipped with this text; once it behaves the test
 * fails, so the stale entry is removed.
 */
function knownDefect(target: ConformanceTarget, check: DefectCheck, behaves: boolean, err: ConveyorError): string | undefined {
  const defect = target.knownDefects?.[check];
  if (defect === undefined) return undefined;
  if (behaves) expect.fail(`known defect "${check}" no longer shows: remove it from the target's knownDefects`);
  return `known defect (${check}): ${defect}; got ${err.code}${err.retryable ? " (retryable)" : ""}: ${err.message}`;
}

/** Dropped connections and stalled servers, for targets that can inject them. */
export function registerFaultTests(name: string, env: () => FaultEnv): void {
  it(`${name}: a connection dropped mid-download is a retryable error and leaves no file`, async (ctx) => {
    const { target, local, captured, track } = env();
    skipUnsupported(ctx, target, "faults");
    if (!target.faults) return ctx.skip("the setup supplies no fault injection and declares none unsupported");
    const source = path.join(local, "fault-src.bin");
    const hash = await randomFile(source, target.transferSize ?? FAULT_FILE);
    await target.files.put("fault/f.bin", source);
    const connector = target.create(connectionFor(target, "fault/f.bin", "download"), captured.context, { retryBaseDelayMs: 20 });
    try {
      const file = (await track(connector.list("fault"))).find((f) => f.name === "f.bin") as RemoteFile;
      target.faults.dropMidTransfer("download", CUT_AFTER);
      const dest = path.join(local, "fault", "f.bin");
      await mkdir(path.dirname(dest), { recursive: true });
      const err = await failure(track(connector.download(file, dest)));
      expect(await exists(dest)).toBe(false);
      expect(await exists(`${dest}.part`)).toBe(false);
      const defect = knownDefect(target, "dropMidDownload", err.code === "transfer" && err.retryable, err);
      if (defect === undefined) {
        expect(err.code, err.message).toBe("transfer");
        expect(err.retryable).toBe(true);
      }
      // The same connector reconnects for the next call.
      target.faults.clear();
      await track(connector.download(file, dest));
      expect(await sha256File(dest)).toBe(hash);
      if (defect !== undefined) ctx.skip(defect);
    } finally {
      target.faults.clear();
      await connector.close();
    }
  });

  it(`${name}: a connection dropped mid-upload leaves nothing under the final name`, async (ctx) => {
    const { target, local, captured, track } = env();
    skipUnsupported(ctx, target, "faults");
    if (!target.faults) return ctx.skip("the setup supplies no fault injection and declares none unsupported");
    const source = path.join(local, "fault-up.bin");
    const hash = await randomFile(source, target.transferSize ?? FAULT_FILE);
    const connector = target.create(connectionFor(target, "fault-up/u.bin", "upload"), captured.context, { retryBaseDelayMs: 20 });
    try {
      if (target.unsupported?.mkdir === undefined) await track(connector.mkdir("fault-up"));
      target.faults.dropMidTransfer("upload", CUT_AFTER);
      const err = await failure(track(connector.upload(source, "fault-up/u.bin")));
      expect(await target.files.size("fault-up/u.bin")).toBeNull();
      const defect = knownDefect(target, "dropMidUpload", ["transfer", "timeout"].includes(err.code) && err.retryable, err);
      if (defect === undefined) {
        expect(["transfer", "timeout"], err.message).toContain(err.code);
        expect(err.retryable).toBe(true);
      }
      target.faults.clear();
      await track(connector.upload(source, "fault-up/u.bin"));
      expect(await target.files.hash("fault-up/u.bin")).toBe(hash);
      if (defect !== undefined) ctx.skip(defect);
    } finally {
      target.faults.clear();
      await connector.close();
    }
  });

  it(`${name}: a server that stops answering times out instead of hanging`, async (ctx) => {
    const { target, local, captured, track } = env();
    skipUnsupported(ctx, target, "faults");
    if (!target.faults) return ctx.skip("the setup supplies no fault injection and declares none unsupported");
    await target.files.write("slow/s.bin", Buffer.alloc(Math.min(8 * 1024 * 1024, target.transferSize ?? Infinity), 1));
    const connector = target.create(connectionFor(target, "slow/s.bin", "download"), captured.context, FAST_TIMEOUTS);
    try {
      const file = (await track(connector.list("slow"))).find((f) => f.name === "s.bin") as RemoteFile;
      target.faults.slow();
      const started = Date.now();
      const dest = path.join(local, "slow", "s.bin");
      await mkdir(path.dirname(dest), { recursive: true });
      const err = await failure(track(connector.download(file, dest)));
      expect(err.code, err.message).toBe("timeout");
      expect(err.retryable).toBe(true);
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(await exists(dest)).toBe(false);
      expect(await exists(`${dest}.part`)).toBe(false);
    } finally {
      target.faults.clear();
      await connector.close();
    }
  });
}
