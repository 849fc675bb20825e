import path from "node:path";
import { randomBytes } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { createFtpConnector } from "../../connectors/ftp.js";
import type { ConnectionConfig } from "../../connectors/types.js";
import { TestFtpServer, type FtpServerOptions } from "../helpers/ftp-server.js";
import { folderFiles, removeDir, tempDir, type ConformanceTarget } from "./conformance-kit.js";

/** An ftp-srv on loopback serving a temp folder, as a conformance target. */
export async function ftpTarget(
  tls: FtpServerOptions["tls"],
  connection: Partial<ConnectionConfig>,
  server: Partial<FtpServerOptions> = {},
): Promise<ConformanceTarget & { server: TestFtpServer }> {
  const root = await tempDir("ftp-root");
  await mkdir(path.join(root, "data"), { recursive: true });
  const password = `ftp-${randomBytes(6).toString("hex")}`;
  const ftp = await new TestFtpServer({ root, username: "conveyor", password, tls, ...server }).start();
  return {
    server: ftp,
    connection: {
      type: "ftp",
      address: "127.0.0.1",
      port: ftp.port,
      username: "conveyor",
      password,
      path: "/data",
      ...connection,
    },
    create: createFtpConnector,
    files: folderFiles(path.join(root, "data")),
    loginAttempts: () => ftp.loginAttempts,
    faults: {
      dropMidTransfer: (direction, afterBytes) => ftp.dropNext(direction, afterBytes),
      slow: () => ftp.stallNext("download", 256 * 1024),
      clear: () => ftp.clearFaults(),
    },
    traceMarker: /PASS \*{8}/,
    async close() {
      await ftp.close();
      await removeDir(root);
    },
  };
}
