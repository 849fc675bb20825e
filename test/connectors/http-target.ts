import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { HttpConnector } from "../../connectors/http.js";
import { httpSpec } from "../../connectors/http-spec.js";
import { completeConnector } from "../../connectors/index.js";
import type { ConnectionConfig } from "../../connectors/types.js";
import { HttpFileServer } from "../helpers/http-file-server.js";
import { TcpProxy } from "../helpers/tcp-proxy.js";
import { folderFiles, removeDir, tempDir, type ConformanceTarget } from "./conformance-kit.js";

/**
 * http against a real node:http file server with basic auth, behind the
 * fault-injecting proxy. An http connection is one URL: GET downloads it (an
 * import), PUT sends a file to it (an export), so the target names a URL per
 * file and direction.
 */
export async function httpTarget(): Promise<ConformanceTarget> {
  const root = await tempDir("http-root");
  const password = `http-${randomBytes(6).toString("hex")}`;
  // What the connection's own address serves: the connection test GETs it.
  await writeFile(path.join(root, "feed.json"), '[{"sku":"A"}]');
  const server = await new HttpFileServer(root, { username: "conveyor", password }).start();
  const proxy = await new TcpProxy(server.port).start();
  const url = (rel: string): string => `http://127.0.0.1:${proxy.port}/${rel.split("/").map(encodeURIComponent).join("/")}`;
  const connection: ConnectionConfig = { type: "http", address: url("feed.json"), method: "GET", username: "conveyor", password };
  return {
    connection,
    fileConnection: (rel, direction) => ({ ...connection, address: url(rel), method: direction === "download" ? "GET" : "PUT" }),
    create: (conn, ctx, options) =>
      completeConnector(
        httpSpec,
        new HttpConnector(conn, { ...ctx, settings: { ...ctx.settings, allowPrivateHosts: true } }, {
          ...(options?.idleTimeoutMs ? { timeoutMs: options.idleTimeoutMs } : {}),
          ...(options?.retryBaseDelayMs ? { retry: { baseDelayMs: options.retryBaseDelayMs, maxDelayMs: options.retryBaseDelayMs * 4 } } : {}),
        }),
      ),
    files: folderFiles(root),
    loginAttempts: () => server.authAttempts,
    // A feed is sized by downloading it; the listing shows 0.
    listsSize: false,
    listsModified: false,
    faults: {
      // Every attempt breaks: the connector retries a broken download on its own, and must give up retryable.
      dropMidTransfer: (direction, afterBytes) => proxy.cutAfter(afterBytes, direction === "download" ? "down" : "up", true),
      slow: () => proxy.stall(),
      clear: () => proxy.heal(),
    },
    unsupported: {
      folders: "an http connection is one URL: its listing is the one virtual file the URL names",
      paths: "an http connection has no remote paths to climb out of: the URL is the whole address",
      missingFolder: "an http connection has no folders",
      delete: "http connections only download or send (delete answers a protocol error)",
      move: "http connections only download or send (move answers a protocol error)",
      mkdir: "http connections only download or send (mkdir answers a protocol error)",
      atomicListing: "how a sent body is stored is the receiving server's business; the connector sends one request",
      refusals: "the test server is plain http: there is no host key, and no certificate to refuse",
    },
    async close() {
      await proxy.close();
      await server.close();
      await removeDir(root);
    },
  };
}
