import path from "node:path";
import { randomBytes } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { createSftpConnector } from "../../connectors/sftp.js";
import type { ConnectionConfig } from "../../connectors/types.js";
import { TestSftpServer } from "../helpers/sftp-server.js";
import { TcpProxy } from "../helpers/tcp-proxy.js";
import { folderFiles, removeDir, tempDir, type ConformanceTarget } from "./conformance-kit.js";

/** ssh2's SFTP server on loopback behind a fault-injecting proxy, as a conformance target. */
export async function sftpTarget(
  connection: Partial<ConnectionConfig> = {},
  publicKey?: string,
): Promise<ConformanceTarget & { server: TestSftpServer; proxy: TcpProxy }> {
  const root = await tempDir("sftp-root");
  await mkdir(path.join(root, "data"), { recursive: true });
  const password = `sftp-${randomBytes(6).toString("hex")}`;
  const server = await new TestSftpServer({ root, username: "conveyor", password, publicKey }).start();
  const proxy = await new TcpProxy(server.port).start();
  return {
    server,
    proxy,
    connection: { type: "sftp", address: "127.0.0.1", port: proxy.port, username: "conveyor", password, path: "/data", ...connection },
    create: createSftpConnector,
    files: folderFiles(path.join(root, "data")),
    loginAttempts: () => server.loginAttempts,
    faults: {
      dropMidTransfer: (direction, afterBytes) => proxy.cutAfter(afterBytes, direction === "download" ? "down" : "up"),
      slow: () => proxy.stall(),
      clear: () => proxy.heal(),
    },
    refusals: [{ name: "host key mismatch", overrides: { host_key: "SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" }, code: "host_key" }],
    traceMarker: /USERAUTH_REQUEST/,
    async close() {
      await proxy.close();
      await server.close();
      await removeDir(root);
    },
  };
}
