import type { Logger } from "../src/log.js";
import type { Settings } from "../src/config.js";

// The types every connector shares: the connection it is given, what it returns, the interface it implements.

/**
 * A connection as a connector receives it: parsed, defaults applied and every
 * placeholder resolved (keys as in automations.md). Only the keys several
 * types share are named here; each connector names its own in its own
 * connection type (FtpConnection, SftpConnection, HttpConnection,
 * EmailConnection), and its spec declares and checks them. Any other key
 * reads as unknown until narrowed.
 */
export interface ConnectionConfig {
  type: string;
  address?: string | string[];
  username?: string;
  password?: string;
  path?: string;
  port?: number;
  validate?: boolean;
  readonly [key: string]: unknown;
}

/** One entry of a remote listing. `path` is what download/delete/move take. */
export interface RemoteFile {
  name: string;
  path: string;
  size: number;
  /** null when the server's listing carries no reliable time. */
  modified: Date | null;
  /** Connector-specific identity (e-mail: uidvalidity/uid/part), opaque to callers. */
  ref?: string;
  /** `size` is an estimate (an encoded e-mail part): a download of another size is not a cut transfer. */
  approximateSize?: boolean;
  /** Not a stored file but an answer made when it is downloaded (http): nothing can be uploading into it. */
  generated?: boolean;
}

/** What an upload is, for a connection that can say so with the file (e-mail: the default subject and body). */
export interface UploadAbout {
  /** The automation's name. */
  title: string;
  /** One paragraph on the run that made the file. */
  summary: string;
  /** The file is a template's render meant to be read as it is: e-mail sends it as the message body, not attached. */
  asBody?: boolean;
}

export interface TransferResult {
  size: number;
}

export interface ConnectionTestResult {
  ok: true;
  /** What the user should see: server greeting, TLS version, host key fingerprint… never a secret. */
  facts: Record<string, string>;
}

/**
 * Key/value state a connector keeps between runs (OAuth tokens, the IMAP
 * UIDVALIDITY/last-UID checkpoint). It lives in the automation's `metadata`.
 */
export interface MetadataStore {
  get(key: string): unknown;
  set(key: string, value: unknown): Promise<void>;
}

/**
 * The worker settings a connector may read: nothing else of Settings (the API
 * token, the database) reaches it, and of these only what its spec names.
 */
export type ConnectorSettings = Partial<Pick<Settings, "allowPrivateHosts" | "storage" | "smtpUrl">>;

export interface ConnectorContext {
  settings: ConnectorSettings;
  logger: Logger;
  metadata: MetadataStore;
  /** The account's API user: the service's storage root is `<storage>/<apiUser>/`. */
  apiUser: string;
  signal?: AbortSignal;
  /** `--verbose`: protocol traces go to the logger at debug level, with PASS/LOGIN/AUTH redacted. */
  verbose?: boolean;
  /** Fixed time for tests; defaults to Date.now. */
  now?: () => number;
}

/** One record sent by an http export with `payload_multi: 0`. */
export interface RecordSendResult {
  index: number;
  ok: boolean;
  status?: number;
  error?: string;
}

/**
 * The one interface every connection type implements. Paths are relative to
 * the connection's `path` and never climb out of it. Every method throws a
 * ConveyorError with one of the codes connect, auth, not_found, host_key, tls,
 * timeout, transfer, protocol, private_host, unsafe_path.
 */
export interface Connector {
  readonly type: string;
  /** Files of a folder (default: the connection's `path`); folders are left out. */
  list(folder?: string): Promise<RemoteFile[]>;
  /** Download to a local file; the local file is complete or absent when this settles. */
  download(file: RemoteFile, localPath: string): Promise<TransferResult>;
  /**
   * Upload atomically: to `.<name>.part`, size checked, then renamed to `remoteName`.
   * A failure leaves nothing under `remoteName`.
   */
  upload(localPath: string, remoteName: string, about?: UploadAbout): Promise<TransferResult>;
  delete(file: RemoteFile): Promise<void>;
  /** Move into `folder` (created when missing); a timestamp is added to the name when the target exists. Returns the new path. */
  move(file: RemoteFile, folder: string): Promise<string>;
  mkdir(folder: string): Promise<void>;
  test(): Promise<ConnectionTestResult>;
  close(): Promise<void>;
  /** After a live run applied the file: e-mail marks it seen and advances its checkpoint. */
  markProcessed?(file: RemoteFile): Promise<void>;
  /** What the connection learned that a run records (sftp: the host key it accepted). */
  facts?(): Record<string, string>;
  /** http export with `payload_multi: 0`: one request per record, each with its own result. */
  sendRecords?(records: readonly unknown[]): Promise<RecordSendResult[]>;
}

/** The operations a connector may leave out when its spec does not declare the capability: the registry refuses them. */
export type OptionalOperation = "delete" | "move" | "mkdir";

/** What a spec's factory returns: a Connector, possibly without the operations it cannot do. */
export type ConnectorParts = Omit<Connector, OptionalOperation> & Partial<Pick<Connector, OptionalOperation>>;

/** Builds a connector from a resolved connection; the registry completes what it leaves out. */
export type ConnectorFactory = (connection: ConnectionConfig, context: ConnectorContext) => ConnectorParts;
