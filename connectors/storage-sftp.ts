import { ConveyorError } from "../src/errors.js";
import { registerSecret } from "../src/secrets.js";
import { SftpConnector } from "./sftp.js";
import type { TransportOptions } from "./options.js";
import type { ConnectionConfig, Connector, ConnectorContext } from "./types.js";
import { accountSegment, cleanRelative, joinRelative } from "./storage-paths.js";

/**
 * `sftp://user:password@host:port/path?host_key=SHA256:…` → the sftp
 * connection the storage is reached over. The setting is the only place the
 * storage server's credentials live; they are never part of an automation.
 */
export function sftpStorageConnection(type: "sdsftp" | "sds3", storage: string, apiUser: string, relative: string | undefined): ConnectionConfig {
  let url: URL;
  try {
    url = new URL(storage);
  } catch {
    throw new ConveyorError("settings_invalid", "CONVEYOR_STORAGE is not a valid sftp:// URL", { hint: "sftp://user:password@host:22/folder" });
  }
  const password = url.password ? decodeURIComponent(url.password) : undefined;
  registerSecret(password);
  if (!url.hostname || !url.username)
    throw new ConveyorError("settings_invalid", "CONVEYOR_STORAGE sftp:// URL needs a user and a host", { hint: "sftp://user:password@host:22/folder" });
  const root = cleanRelative(decodeURIComponent(url.pathname), "CONVEYOR_STORAGE path");
  const hostKey = url.searchParams.get("host_key") ?? undefined;
  return {
    // The sftp connector speaks SFTP whatever the type says; the type names the connection in messages.
    type,
    address: url.hostname.replace(/^\[|\]$/g, ""),
    port: url.port ? Number(url.port) : 22,
    username: decodeURIComponent(url.username),
    ...(password === undefined ? {} : { password }),
    ...(hostKey ? { host_key: hostKey } : {}),
    // An absolute folder on the server: the URL's path names it from the server's root.
    path: `/${joinRelative([root, "CONVEYOR_STORAGE path"], [accountSegment(apiUser), "API user"], [relative, "connection.path"])}`,
  };
}

/** The service's storage on an SFTP server, through the sftp connector, under the sdsftp/sds3 name. */
export function createSftpStorage(type: "sdsftp" | "sds3", conn: ConnectionConfig, ctx: ConnectorContext, options?: TransportOptions): Connector {
  return new SftpConnector(sftpStorageConnection(type, ctx.settings.storage, ctx.apiUser, conn.path), ctx, options);
}
