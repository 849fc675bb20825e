import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { S3StorageConnector } from "../../connectors/storage-s3.js";
import { S3RVER_KEY, S3TestServer } from "../helpers/s3-server.js";
import { TcpProxy } from "../helpers/tcp-proxy.js";
import type { ConformanceTarget, ServerFiles } from "./conformance-kit.js";

const STORAGE_PREFIX = "tenants";
/** The suite's context uses the API user `conformance`; the connection's path is `feeds`. */
const ROOT = `${STORAGE_PREFIX}/conformance/feeds`;

function isMissing(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === "NoSuchKey" || e.name === "NotFound" || e.$metadata?.httpStatusCode === 404;
}

/** What the bucket really holds, read straight from s3rver (not through the fault proxy). */
function bucketFiles(client: S3Client, bucket: string): ServerFiles {
  const key = (rel: string): string => `${ROOT}/${rel}`;
  const list = async (rel: string, withFolders: boolean): Promise<Array<{ name: string; size: number }>> => {
    const prefix = `${key(rel)}/`;
    const found: Array<{ name: string; size: number }> = [];
    let token: string | undefined;
    do {
      const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, Delimiter: "/", ContinuationToken: token }));
      for (const o of page.Contents ?? []) if (o.Key) found.push({ name: o.Key.slice(prefix.length), size: o.Size ?? 0 });
      if (withFolders) for (const p of page.CommonPrefixes ?? []) if (p.Prefix) found.push({ name: p.Prefix.slice(prefix.length, -1), size: 0 });
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return found;
  };
  return {
    async put(rel, localFile) {
      const size = (await stat(localFile)).size;
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key(rel), Body: createReadStream(localFile), ContentLength: size }));
    },
    async write(rel, content) {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key(rel), Body: typeof content === "string" ? Buffer.from(content) : content }));
    },
    async hash(rel) {
      try {
        const res = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key(rel) }));
        const hash = createHash("sha256");
        await pipeline(res.Body as Readable, hash);
        return hash.digest("hex");
      } catch (err) {
        if (isMissing(err)) return null;
        throw err;
      }
    },
    async names(rel) {
      return (await list(rel, true)).map((e) => e.name);
    },
    entries: (rel) => list(rel, false),
    async size(rel) {
      try {
        return (await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key(rel) }))).ContentLength ?? null;
      } catch (err) {
        if (isMissing(err)) return null;
        throw err;
      }
    },
  };
}

/**
 * sds3 with CONVEYOR_STORAGE in a bucket of s3rver, reached through the
 * fault-injecting TCP proxy. The suite's `password` stands for the secret
 * key; s3rver checks only the key id, so a password other than s3rver's own
 * secret is sent with a key id s3rver does not know, as a wrong key pair is
 * refused by real S3.
 */
export async function s3StorageTarget(): Promise<ConformanceTarget> {
  const s3 = new S3TestServer();
  await s3.start();
  const proxy = await new TcpProxy(Number(new URL(s3.endpoint).port)).start();
  const checker = new S3Client({
    region: "us-east-1",
    endpoint: s3.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: S3RVER_KEY.id, secretAccessKey: S3RVER_KEY.secret },
    // s3rver would store the aws-chunked framing of the newer default checksums as content.
    requestChecksumCalculation: "WHEN_REQUIRED",
  });
  return {
    connection: { type: "sds3", path: "feeds", password: S3RVER_KEY.secret },
    create: (conn, ctx, options) => {
      const secret = conn.password ?? "";
      const env = s3.env({
        CONVEYOR_S3_ENDPOINT: `http://127.0.0.1:${proxy.port}`,
        AWS_ACCESS_KEY_ID: secret === S3RVER_KEY.secret ? S3RVER_KEY.id : "CONFORMANCE-UNKNOWN-KEY",
        AWS_SECRET_ACCESS_KEY: secret,
      });
      const context = { ...ctx, settings: { ...ctx.settings, storage: `s3://${s3.bucket}/${STORAGE_PREFIX}` } };
      return new S3StorageConnector("sds3", { type: "sds3", path: conn.path ?? "" }, context, {
        env,
        ...(options?.idleTimeoutMs ? { timeoutMs: options.idleTimeoutMs } : {}),
      });
    },
    files: bucketFiles(checker, s3.bucket),
    // S3 sets LastModified itself at upload time; a client cannot give a file an older time.
    listsModified: false,
    faults: {
      dropMidTransfer: (direction, afterBytes) => proxy.cutAfter(afterBytes, direction === "download" ? "down" : "up"),
      slow: () => proxy.stall(),
      clear: () => proxy.heal(),
    },
    unsupported: {
      mkdir: "S3 has no folders: mkdir only checks the name, a key with slashes makes the folder",
      refusals: "S3 storage has no host key to pin; s3rver serves plain http, so there is no certificate to refuse",
      missingFolder: "S3 has no folders: a prefix without objects lists as empty, as an emptied inbox folder must",
      absolutePath: "storage paths never leave the connection's folder: a leading slash is the seed's way of writing them",
      trace: "the S3 storage connector writes no protocol trace (the SDK's requests are not logged)",
    },
    async close() {
      checker.destroy();
      await proxy.close();
      await s3.stop();
    },
  };
}
