import { createHash, randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FileSink } from "../../connectors/file-sink.js";
import { ReleasedReads } from "../../connectors/released-reads.js";
import { removeDir, tempDir } from "./conformance-kit.js";

const sha = (b: Buffer): string => createHash("sha256").update(b).digest("hex");

describe("a data socket reading into reused slabs, written by FileSink", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await tempDir("released-reads");
  });
  afterAll(async () => removeDir(dir));

  it("keeps every byte, also what arrives before the pipe is attached, and reuses its slabs", async () => {
    const body = randomBytes(9 * 1024 * 1024 + 777);
    // The server writes at once, as an FTP server does on the data connection before the client has read 150.
    const server = net.createServer((s) => s.end(body));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as net.AddressInfo;
    try {
      const reads = new ReleasedReads();
      let released = 0;
      const socket = reads.newSocket();
      await new Promise<void>((resolve, reject) => socket.once("error", reject).connect(port, "127.0.0.1", resolve));
      await new Promise((resolve) => setTimeout(resolve, 50));
      const file = path.join(dir, "got.bin");
      const sink = new FileSink(
        file,
        (chunk) => {
          released += chunk.length;
          reads.release(chunk);
        },
        1024 * 1024,
      );
      await pipeline(socket, sink);
      const got = await readFile(file);
      expect(got.length).toBe(body.length);
      expect(sha(got)).toBe(sha(body));
      expect(released).toBe(body.length);
      expect(reads.slabsAllocated).toBeLessThan(9);
    } finally {
      server.close();
    }
  });
});
