import { ConveyorError } from "../src/errors.js";
import { registerSecret } from "../src/secrets.js";
import { SftpConnector } from "./sftp.js";
import type { TransportOptions } from "./options.js";
import type { ConnectionConfig, ConnectionTestResult, Connector, ConnectorContext, RemoteFile, TransferResult } from "./types.js";
import { linkRefused } from "./storage-confined.js";
import { accountSegment, cleanRelative, joinRelative, partName, storageSetting } from "./storage-paths.js";

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
  const connection = sftpStorageConnection(type, storageSetting(ctx.settings), ctx.apiUser, conn.path);
  const account = sftpStorageConnection(type, storageSetting(ctx.settings), ctx.apiUser, "").path ?? "/";
  return new SftpStorageConnector(connection, ctx, options, account, cleanRelative(conn.path, "connection.path"));
}

/**
 * The sftp connector confined to the account's folder on the storage server:
 * before each operation every segment of the path, from the account's folder
 * down, is looked at with LSTAT on the server and a link, wherever it points,
 * is refused. SFTP has no way to open relative to an open folder, so a link
 * made on the server between the check and the operation is not caught; the
 * check closes every link that exists when the run reaches the file.
 * Messages name paths relative to the account's storage, never the server's.
 */
class SftpStorageConnector extends SftpConnector {
  constructor(
    connection: ConnectionConfig,
    context: ConnectorContext,
    options: TransportOptions | undefined,
    private readonly account: string,
    private readonly base: string,
  ) {
    super(connection, context, options);
  }

  /** Refuses a link at any segment of `relative` (to the connection's folder) that exists. */
  private async confine(relative: string, field: string): Promise<void> {
    const rel = joinRelative([this.base, "connection.path"], [relative, field]);
    await this.scrubbed(
      this.op(`check ${rel || "."}`, async (s) => {
        let at = "";
        for (const segment of rel.split("/").filter((p) => p !== "")) {
          at = at ? `${at}/${segment}` : segment;
          const kind = await s.client.exists(`${this.account}/${at}`);
          if (kind === "l") throw linkRefused(field, rel, `/${at}`);
          if (kind === false) return; // the rest is made by the operation, or it fails as not_found
        }
      }),
    );
  }

  /** Server paths in a message become paths relative to the account's storage. */
  private async scrubbed<T>(work: Promise<T>): Promise<T> {
    try {
      return await work;
    } catch (err) {
      if (!(err instanceof ConveyorError)) throw err;
      const strip = (text: string): string => text.split(`${this.account}/`).join("/").split(this.account).join("/");
      throw new ConveyorError(err.code, strip(err.message), { retryable: err.retryable, details: err.details, ...(err.hint ? { hint: strip(err.hint) } : {}) });
    }
  }

  override async list(folder = ""): Promise<RemoteFile[]> {
    await this.confine(folder, "folder");
    return this.scrubbed(super.list(folder));
  }

  override async download(file: RemoteFile, localPath: string): Promise<TransferResult> {
    await this.confine(file.path, "file");
    return this.scrubbed(super.download(file, localPath));
  }

  override async upload(localPath: string, remoteName: string): Promise<TransferResult> {
    await this.confine(remoteName, "file name");
    await this.confine(partName(cleanRelative(remoteName, "file name")), "file name");
    return this.scrubbed(super.upload(localPath, remoteName));
  }

  override async delete(file: RemoteFile): Promise<void> {
    await this.confine(file.path, "file");
    return this.scrubbed(super.delete(file));
  }

  override async move(file: RemoteFile, folder: string): Promise<string> {
    await this.confine(file.path, "file");
    await this.confine(folder, "move folder");
    return this.scrubbed(super.move(file, folder));
  }

  override async mkdir(folder: string): Promise<void> {
    await this.confine(folder, "folder");
    return this.scrubbed(super.mkdir(folder));
  }

  override async test(): Promise<ConnectionTestResult> {
    await this.confine("", "connection.path");
    const result = await this.scrubbed(super.test());
    // The server's folder stays on the server: the account sees its own path.
    return { ok: true, facts: { ...result.facts, path: `/${this.base}` } };
  }
}
