import { randomBytes } from "node:crypto";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { createStorageConnector } from "../../connectors/storage.js";
import type { SftpConnection } from "../../connectors/sftp-session.js";
import type { ConnectionConfig, ConnectorContext } from "../../connectors/types.js";
import { TestSftpServer } from "../helpers/sftp-server.js";
import { TcpProxy } from "../helpers/tcp-proxy.js";
import { folderFiles, removeDir, tempDir, type ConformanceTarget } from "./conformance-kit.js";
import { connectorConformance } from "./conformance.js";
import { s3StorageTarget } from "./s3-target.js";

/**
 * sdsftp with CONVEYOR_STORAGE on an SFTP server (ssh2's server behind the
 * fault-injecting proxy). The storage's credentials and pinned host key live
 * in the setting, not the connection; the target moves the suite's
 * `password` and `host_key` into the storage URL so the suite's wrong-password
 * and host-key checks exercise the real path.
 */
async function sftpStorageTarget(): Promise<ConformanceTarget> {
  const root = await tempDir("sds-sftp-root");
  await mkdir(path.join(root, "storage", "conformance", "feeds"), { recursive: true });
  const password = `sds-${randomBytes(6).toString("hex")}`;
  const server = await new TestSftpServer({ root, username: "worker", password }).start();
  const proxy = await new TcpProxy(server.port).start();
  const storageUrl = (conn: SftpConnection): string => {
    const query = conn.host_key ? `?host_key=${encodeURIComponent(conn.host_key)}` : "";
    return `sftp://worker:${encodeURIComponent(conn.password ?? "")}@127.0.0.1:${proxy.port}/storage${query}`;
  };
  const withStorage = (conn: ConnectionConfig, ctx: ConnectorContext): ConnectorContext => ({ ...ctx, settings: { ...ctx.settings, storage: storageUrl(conn) } });
  return {
    connection: { type: "sdsftp", path: "feeds", password },
    create: (conn, ctx, options) => createStorageConnector({ type: "sdsftp", path: conn.path ?? "" }, withStorage(conn, ctx), options),
    // The suite's context uses the API user `conformance`: its root is <storage>/conformance/.
    files: folderFiles(path.join(root, "storage", "conformance", "feeds")),
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

/** sdsftp with CONVEYOR_STORAGE a local folder: no server, so nothing to log in to, drop or stall. */
async function localStorageTarget(): Promise<ConformanceTarget> {
  const root = await tempDir("sds-local-root");
  const feeds = path.join(root, "conformance", "feeds");
  await mkdir(feeds, { recursive: true });
  return {
    connection: { type: "sdsftp", path: "feeds" },
    create: (conn, ctx) => createStorageConnector({ type: "sdsftp", path: conn.path ?? "" }, { ...ctx, settings: { ...ctx.settings, storage: root } }),
    files: folderFiles(feeds),
    unsupported: {
      password: "a local folder has no password; access is the worker's file permissions",
      faults: "a local folder has no connection to drop or server to stall",
      refusals: "a local folder has no host key or certificate",
      trace: "a local folder has no protocol to trace",
      absolutePath: "storage paths never leave the connection's folder: a leading slash is the seed's way of writing them",
    },
    close: () => removeDir(root),
  };
}

connectorConformance("sdsftp on sftp storage", sftpStorageTarget);
connectorConformance("sdsftp on local-folder storage", localStorageTarget);
connectorConformance("sds3 on S3 storage (s3rver)", s3StorageTarget);
