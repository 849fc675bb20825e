import { createReadStream, createWriteStream } from "node:fs";
import { rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import { ConveyorError } from "../src/errors.js";
import { registerSecret } from "../src/secrets.js";
import type { ConnectionConfig, Connector, ConnectorContext, RemoteFile, TransferResult } from "./types.js";
import { accountSegment, cleanRelative, isPartName, isPlainName, joinRelative, partName, stampedName, storageSetting } from "./storage-paths.js";
import { classifyS3Error } from "./storage-s3-errors.js";

export interface S3StorageOptions {
  env?: NodeJS.ProcessEnv;
  /** Longest wait for a connection and for an answer (default 60 s). */
  timeoutMs?: number;
}

/** `s3://bucket/prefix` → bucket and key prefix (no slashes at either end). */
export function parseS3Url(url: string): { bucket: string; prefix: string } {
  const match = /^s3:\/\/([^/]+)\/?(.*)$/.exec(url);
  if (!match?.[1]) throw new ConveyorError("settings_invalid", `CONVEYOR_STORAGE ${url} is not of the form s3://bucket/prefix`);
  return { bucket: match[1], prefix: cleanRelative(match[2], "CONVEYOR_STORAGE prefix") };
}

/**
 * The service's storage in an S3 bucket (any S3-compatible server: the
 * endpoint comes from CONVEYOR_S3_ENDPOINT or AWS_ENDPOINT_URL, credentials
 * from the usual AWS variables). Keys are `<prefix>/<apiUser>/<path>/<name>`.
 * An upload goes to a hidden `.name.part` key, is size-checked with
 * HeadObject, then copied server-side to the final key and the temporary one
 * deleted: servers that store a PUT in place while it streams (s3rver, some
 * gateways) never show a half-written object under the final name, and a cut
 * upload leaves nothing there.
 */
export class S3StorageConnector implements Connector {
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly root: string;
  private readonly base: string;

  constructor(readonly type: "sdsftp" | "sds3", conn: ConnectionConfig, private readonly ctx: ConnectorContext, options: S3StorageOptions = {}) {
    const env = options.env ?? process.env;
    const { bucket, prefix } = parseS3Url(storageSetting(ctx.settings));
    this.bucket = bucket;
    this.root = joinRelative([prefix, "CONVEYOR_STORAGE prefix"], [accountSegment(ctx.apiUser), "API user"]);
    this.base = cleanRelative(conn.path, "connection.path");
    const endpoint = env.CONVEYOR_S3_ENDPOINT ?? env.AWS_ENDPOINT_URL;
    registerSecret(env.AWS_SECRET_ACCESS_KEY);
    const timeout = options.timeoutMs ?? 60_000;
    this.client = new S3Client({
      region: env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? "us-east-1",
      ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
      ...(env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY
        ? { credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID, secretAccessKey: env.AWS_SECRET_ACCESS_KEY, ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}) } }
        : {}),
      // Connecting is tried three times, with the SDK's own backoff.
      maxAttempts: 3,
      // socketTimeout is an idle timeout: a big transfer that keeps moving is never cut.
      requestHandler: { connectionTimeout: timeout, socketTimeout: timeout },
      // S3-compatible servers often lack the newer default checksums.
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
    });
  }

  /**
   * Key of a path relative to the connection's folder. S3 has no links, but
   * some S3-compatible servers map keys onto files or normalise `..` in the
   * URL, so a key is built only from cleaned segments and checked to stay
   * under the account's prefix.
   */
  private key(relative: string, field: string): string {
    const key = joinRelative([this.root, "storage root"], [this.base, "connection.path"], [relative, field]);
    if (key !== this.root && !key.startsWith(`${this.root}/`))
      throw new ConveyorError("unsafe_path", `${field} "${relative}" is refused: it leaves the account's storage`, {
        details: { field },
        hint: "use a path relative to the connection's folder, without ..",
      });
    return key;
  }

  private relativeOf(key: string): string {
    const prefix = joinRelative([this.root, "storage root"], [this.base, "connection.path"]);
    return prefix ? key.slice(prefix.length + 1) : key;
  }

  private async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw classifyS3Error(err, what, this.bucket);
    }
  }

  async list(folder?: string): Promise<RemoteFile[]> {
    const dirKey = this.key(folder ?? "", "folder");
    const prefix = dirKey ? `${dirKey}/` : "";
    const files: RemoteFile[] = [];
    let token: string | undefined;
    do {
      // The message names the folder as the account wrote it; the key prefix would show the storage's layout.
      const page = await this.call(`folder /${cleanRelative(folder, "folder")}`, () =>
        this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, Delimiter: "/", ContinuationToken: token })),
      );
      for (const obj of page.Contents ?? []) {
        if (!obj.Key || obj.Key.endsWith("/")) continue;
        const name = obj.Key.slice(prefix.length);
        // A key segment such as "..", "." or "" would be read back as another key than the one listed.
        if (isPartName(name) || !isPlainName(name)) continue;
        files.push({ name, path: this.relativeOf(obj.Key), size: obj.Size ?? 0, modified: obj.LastModified ?? null });
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return files.sort((a, b) => a.name.localeCompare(b.name));
  }

  async download(file: RemoteFile, localPath: string): Promise<TransferResult> {
    const key = this.key(file.path, "file");
    const part = `${localPath}.part`;
    try {
      const res = await this.call(`file ${file.path}`, () => this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key })));
      if (!(res.Body instanceof Readable)) throw new ConveyorError("protocol", `the S3 server sent no body for ${file.path}`);
      await this.call(`download of ${file.path}`, () => pipeline(res.Body as Readable, createWriteStream(part)));
      const size = (await stat(part)).size;
      if (res.ContentLength !== undefined && size !== res.ContentLength)
        throw new ConveyorError("transfer", `download of ${file.path} got ${size} of ${res.ContentLength} bytes`, { retryable: true });
      await rename(part, localPath);
      return { size };
    } catch (err) {
      await rm(part, { force: true });
      throw err;
    }
  }

  async upload(localPath: string, remoteName: string): Promise<TransferResult> {
    const key = this.key(remoteName, "file name");
    const temp = partName(key);
    const size = (await stat(localPath)).size;
    try {
      await this.call(`upload of ${remoteName}`, () =>
        this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: temp, Body: createReadStream(localPath), ContentLength: size })),
      );
      const head = await this.call(`upload of ${remoteName}`, () => this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: temp })));
      if (head.ContentLength !== size)
        throw new ConveyorError("transfer", `upload of ${remoteName} stored ${head.ContentLength ?? "?"} of ${size} bytes`, { retryable: true });
      await this.call(`upload of ${remoteName}`, () => this.client.send(new CopyObjectCommand({ Bucket: this.bucket, Key: key, CopySource: this.copySource(temp) })));
      return { size };
    } finally {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: temp })).catch(() => undefined);
    }
  }

  private copySource(key: string): string {
    return `${this.bucket}/${key.split("/").map(encodeURIComponent).join("/")}`;
  }

  private async exists(key: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return true;
    } catch (err) {
      const e = classifyS3Error(err, `file ${this.relativeOf(key)}`, this.bucket);
      if (e.code === "not_found") return false;
      throw e;
    }
  }

  async delete(file: RemoteFile): Promise<void> {
    const key = this.key(file.path, "file");
    // S3 deletes a missing key without complaint; the interface reports it.
    if (!(await this.exists(key))) throw new ConveyorError("not_found", `file ${file.path} does not exist in the storage`);
    await this.call(`delete of ${file.path}`, () => this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key })));
  }

  async move(file: RemoteFile, folder: string): Promise<string> {
    const src = this.key(file.path, "file");
    const dir = this.key(folder, "move folder");
    let name = path.posix.basename(src);
    if (await this.exists(`${dir}/${name}`)) name = stampedName(name, new Date((this.ctx.now ?? Date.now)()));
    const dest = `${dir}/${name}`;
    await this.call(`move of ${file.path}`, () => this.client.send(new CopyObjectCommand({ Bucket: this.bucket, Key: dest, CopySource: this.copySource(src) })));
    await this.call(`move of ${file.path}`, () => this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: src })));
    return this.relativeOf(dest);
  }

  async mkdir(folder: string): Promise<void> {
    // S3 has no folders: a key with slashes is enough. Only the name is checked.
    this.key(folder, "folder");
  }

  async test(): Promise<{ ok: true; facts: Record<string, string> }> {
    await this.call(`bucket ${this.bucket}`, () => this.client.send(new HeadBucketCommand({ Bucket: this.bucket }))).catch((err: unknown) => {
      // HeadBucket answers a bare 404, which the classifier cannot tell from a missing key.
      if (err instanceof ConveyorError && err.code === "not_found")
        throw new ConveyorError("not_found", `the storage bucket ${this.bucket} does not exist`, { cause: err, hint: "check CONVEYOR_STORAGE (s3://bucket/prefix)" });
      throw err;
    });
    return { ok: true, facts: { storage: "S3", bucket: this.bucket, folder: `/${joinRelative([this.base, "connection.path"])}` } };
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}
