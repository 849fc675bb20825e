import { mkdir, readdir } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SftpConnector, type SftpTuning } from "../../connectors/sftp.js";
import { planRanges } from "../../connectors/sftp-ranges.js";
import type { RemoteFile } from "../../connectors/types.js";
import { ConveyorError } from "../../src/errors.js";
import { capturingContext, exists, randomFile, removeDir, sha256File, tempDir } from "./conformance-kit.js";
import { TestSftpServer, type ChannelHooks } from "../helpers/sftp-server.js";
import { OpenSshServer } from "./openssh-server.js";
import { sftpTarget } from "./sftp-target.js";

const MiB = 1024 * 1024;
/** Small ranges and chunks so a few MiB cross many range and chunk edges over several channels. */
const SMALL: Partial<SftpTuning> = { channels: 3, rangeSize: MiB + 7, chunkSize: 60_000, bytesInFlight: 256 * 1024, writeBatch: 200_000 };

async function fileOf(connector: SftpConnector, folder: string, name: string): Promise<RemoteFile> {
  const found = (await connector.list(folder)).find((f) => f.name === name);
  if (!found) throw new Error(`${name} not listed`);
  return found;
}

describe("sftp ranged download plan", () => {
  it("covers a file that is not a multiple of the range size, the last range short", () => {
    const ranges = planRanges(10 * MiB + 3, 4 * MiB);
    expect(ranges.map((r) => [r.start, r.end])).toEqual([
      [0, 4 * MiB],
      [4 * MiB, 8 * MiB],
      [8 * MiB, 10 * MiB + 3],
    ]);
    expect(planRanges(0, MiB)).toEqual([]);
  });
});

describe("sftp ranged download over several channels (ssh2's server)", () => {
  let target: Awaited<ReturnType<typeof sftpTarget>>;
  let local: string;
  beforeAll(async () => {
    target = await sftpTarget();
    local = await tempDir("sftp-ranges");
  });
  afterAll(async () => {
    await target.close();
    await removeDir(local);
  });

  it("downloads a file of 5 MiB + 12,345 bytes whole, ranges and chunks uneven", async () => {
    const source = path.join(local, "odd.bin");
    const hash = await randomFile(source, 5 * MiB + 12_345);
    await target.files.put("odd.bin", source);
    const connector = new SftpConnector(target.connection, capturingContext().context, undefined, SMALL);
    try {
      const dest = path.join(local, "got", "odd.bin");
      const result = await connector.download(await fileOf(connector, "", "odd.bin"), dest);
      expect(result.size).toBe(5 * MiB + 12_345);
      expect(await sha256File(dest)).toBe(hash);
      // Again on the same session: the extra channels of the first download were closed, new ones open.
      await connector.download(await fileOf(connector, "", "odd.bin"), dest);
      expect(await sha256File(dest)).toBe(hash);
    } finally {
      await connector.close();
    }
  });

  it("a connection dropped mid-range fails retryable and leaves no file, part or final", async () => {
    const source = path.join(local, "drop.bin");
    await randomFile(source, 6 * MiB);
    await target.files.put("drop.bin", source);
    const connector = new SftpConnector(target.connection, capturingContext().context, { retryBaseDelayMs: 10 }, SMALL);
    const dest = path.join(local, "dropped", "drop.bin");
    await mkdir(path.dirname(dest), { recursive: true });
    try {
      const file = await fileOf(connector, "", "drop.bin");
      target.proxy.cutAfter(2 * MiB, "down");
      const err = await connector.download(file, dest).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConveyorError);
      expect((err as ConveyorError).code, (err as ConveyorError).message).toBe("transfer");
      expect((err as ConveyorError).retryable).toBe(true);
      expect(await exists(dest)).toBe(false);
      expect(await readdir(path.dirname(dest))).toEqual([]);
    } finally {
      target.proxy.heal();
      await connector.close();
    }
  });
});

describe("sftp ranged download while the server sets channels up slowly", () => {
  let local: string;
  beforeAll(async () => {
    local = await tempDir("sftp-join");
  });
  afterAll(async () => {
    await removeDir(local);
  });

  /** ssh2's server with `hooks` on a connection's channels (0 is the session's own), a file of `size` bytes, and the reads each channel answered. */
  async function slowServer(size: number, hooks: (reads: number[]) => ChannelHooks): Promise<{ connector: SftpConnector; file: RemoteFile; hash: string; reads: number[]; close: () => Promise<void> }> {
    const root = await tempDir("sftp-join-root");
    const hash = await randomFile(path.join(root, "data", "join.bin"), size);
    const reads: number[] = [];
    const own = hooks(reads);
    const channels: ChannelHooks = {
      ...own,
      read: (channel, offset, length) => {
        reads[channel] = (reads[channel] ?? 0) + 1;
        return own.read?.(channel, offset, length) ?? Promise.resolve();
      },
    };
    const server = await new TestSftpServer({ root, username: "conveyor", password: "join-secret", channels }).start();
    const connection = { type: "sftp" as const, address: "127.0.0.1", port: server.port, username: "conveyor", password: "join-secret", path: "/data" };
    const connector = new SftpConnector(connection, capturingContext().context, undefined, SMALL);
    const file = await fileOf(connector, "", "join.bin");
    return { connector, file, hash, reads, close: async () => (await connector.close(), await server.close(), await removeDir(root)) };
  }

  it("reads on its first channel at once and ends without the channels the server has not set up", async () => {
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const slow = await slowServer(3 * MiB + 5, () => ({ accept: (channel) => (channel === 0 ? Promise.resolve() : held) }));
    try {
      const dest = path.join(local, "first-only.bin");
      // Waiting for the held channels would never end: the test's timeout would fail it.
      expect((await slow.connector.download(slow.file, dest)).size).toBe(3 * MiB + 5);
      expect(await sha256File(dest)).toBe(slow.hash);
      expect(slow.reads.length).toBe(1);
      // Set up once the download has ended, the late channels are ended by the client; the session goes on.
      release();
      await slow.connector.download(slow.file, dest);
      expect(await sha256File(dest)).toBe(slow.hash);
    } finally {
      await slow.close();
    }
  });

  it("gives the channels that open mid-download ranges of their own", async () => {
    let joined = (): void => undefined;
    const other = new Promise<void>((resolve) => (joined = resolve));
    let started = (): void => undefined;
    const reading = new Promise<void>((resolve) => (started = resolve));
    const slow = await slowServer(9 * MiB, (reads) => ({
      // The later channels are set up only once the first has answered reads; the first then waits for one of them.
      accept: (channel) => (channel === 0 ? Promise.resolve() : reading),
      read: (channel) => {
        if (channel > 0) joined();
        else if ((reads[0] ?? 0) > 20) {
          started();
          return other;
        }
        return Promise.resolve();
      },
    }));
    try {
      const dest = path.join(local, "joined.bin");
      expect((await slow.connector.download(slow.file, dest)).size).toBe(9 * MiB);
      expect(await sha256File(dest)).toBe(slow.hash);
      expect(slow.reads[0]).toBeGreaterThan(20);
      expect(slow.reads.slice(1).some((n) => n > 0)).toBe(true);
    } finally {
      await slow.close();
    }
  });

  it("downloads over its first channel alone when the server refuses more", async () => {
    const slow = await slowServer(4 * MiB, () => ({ open: (channel) => channel === 0 }));
    try {
      const dest = path.join(local, "refused.bin");
      expect((await slow.connector.download(slow.file, dest)).size).toBe(4 * MiB);
      expect(await sha256File(dest)).toBe(slow.hash);
      expect(slow.reads.length).toBe(1);
    } finally {
      await slow.close();
    }
  });
});

const sshdMissing = OpenSshServer.available() ? false : "Debian's openssh-server is not installed (/usr/sbin/sshd): run scripts/test-servers.sh";

describe.skipIf(sshdMissing !== false)("sftp against Debian's OpenSSH server", () => {
  let server: OpenSshServer;
  let local: string;
  beforeAll(async () => {
    server = await new OpenSshServer().start();
    local = await tempDir("sftp-openssh");
  });
  afterAll(async () => {
    await server?.close();
    await removeDir(local);
  });

  it("lists and downloads a 20 MiB file over several channels, the host key recorded", async () => {
    const size = 20 * MiB + 999;
    const hash = await randomFile(path.join(server.dir, "data", "real.bin"), size);
    const connection = { type: "sftp" as const, address: "127.0.0.1", port: server.port, username: server.username, password: server.privateKey, is_key_file: true, path: path.join(server.dir, "data") };
    const connector = new SftpConnector(connection, capturingContext().context, undefined, { rangeSize: 4 * MiB });
    try {
      const file = await fileOf(connector, "", "real.bin");
      expect(file.size).toBe(size);
      const dest = path.join(local, "real.bin");
      expect((await connector.download(file, dest)).size).toBe(size);
      expect(await sha256File(dest)).toBe(hash);
      expect(connector.facts().host_key).toBe(server.fingerprint());
    } finally {
      await connector.close();
    }
  });

  // The socket's read buffers are reused (ssh-read-ring.ts) except where ssh2 kept a view, as it does of a key exchange's messages.
  it("downloads a file intact while the server rekeys every megabyte", async () => {
    const rekeying = await new OpenSshServer(["RekeyLimit 1M"]).start();
    try {
      const size = 10 * MiB + 4321;
      const hash = await randomFile(path.join(rekeying.dir, "data", "rekey.bin"), size);
      const connection = { type: "sftp" as const, address: "127.0.0.1", port: rekeying.port, username: rekeying.username, password: rekeying.privateKey, is_key_file: true, path: path.join(rekeying.dir, "data") };
      const connector = new SftpConnector(connection, capturingContext().context);
      try {
        const dest = path.join(local, "rekey.bin");
        for (let round = 0; round < 2; round++) {
          expect((await connector.download(await fileOf(connector, "", "rekey.bin"), dest)).size).toBe(size);
          expect(await sha256File(dest)).toBe(hash);
        }
      } finally {
        await connector.close();
      }
    } finally {
      await rekeying.close();
    }
  });
});

if (sshdMissing !== false) {
  describe("sftp against Debian's OpenSSH server", () => {
    it.skip(sshdMissing, () => undefined);
  });
}
