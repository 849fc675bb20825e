import { mkdtempSync, rmSync } from "node:fs";
import { copyFile, mkdir, rename } from "node:fs/promises";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}
type S3rverCtor = new (options: {
  address: string;
  port: number;
  silent: boolean;
  directory: string;
  configureBuckets: Array<{ name: string }>;
}) => S3rverInstance;

// s3rver ships CommonJS without type declarations; this is the part we use.
const require = createRequire(import.meta.url);
const S3rver = require("s3rver") as S3rverCtor;

interface FilesystemStoreProto {
  getResourcePath(bucket: string, key: string, resource: string): string;
  getMetadata(bucket: string, key: string): Promise<unknown>;
  putMetadata(bucket: string, key: string, metadata: unknown): Promise<void>;
  copyObject(srcBucket: string, srcKey: string, destBucket: string, destKey: string, replacementMetadata?: unknown): Promise<unknown>;
}

/*
 * Real S3 shows a copied object only once the copy is complete; s3rver copies
 * the file in place, so a lister polling during a 20 MB copy sometimes saw
 * the final key half written, and the atomic-upload test failed on the fake,
 * not on our protocol. The copy is made beside the object under a name the
 * listing ignores, with its metadata first, and renamed into place.
 */
const store = (require("s3rver/lib/stores/filesystem") as { prototype: FilesystemStoreProto }).prototype;
store.copyObject = async function atomicCopy(this: FilesystemStoreProto, srcBucket, srcKey, destBucket, destKey, replacementMetadata) {
  const src = this.getResourcePath(srcBucket, srcKey, "object");
  const dest = this.getResourcePath(destBucket, destKey, "object");
  if (src !== dest) {
    await mkdir(path.dirname(dest), { recursive: true });
    if (!replacementMetadata) {
      for (const resource of ["metadata.json", "object.md5"]) await copyFile(this.getResourcePath(srcBucket, srcKey, resource), this.getResourcePath(destBucket, destKey, resource));
    }
    const partial = `${dest}.copying`;
    await copyFile(src, partial);
    await rename(partial, dest);
  }
  if (replacementMetadata) await this.putMetadata(destBucket, destKey, replacementMetadata);
  return this.getMetadata(destBucket, destKey);
};

/** s3rver's one built-in account: any other key pair is refused like real S3 would. */
export const S3RVER_KEY = { id: "S3RVER", secret: "S3RVER" };

/** A real S3-compatible server (s3rver) on loopback with one bucket, files in a temp folder. */
export class S3TestServer {
  private server: S3rverInstance | undefined;
  private dir = "";
  endpoint = "";

  constructor(readonly bucket = "conveyor-test") {}

  async start(): Promise<void> {
    this.dir = mkdtempSync(path.join(tmpdir(), "conveyor-s3rver-"));
    this.server = new S3rver({ address: "127.0.0.1", port: 0, silent: true, directory: this.dir, configureBuckets: [{ name: this.bucket }] });
    const info = await this.server.run();
    this.endpoint = `http://127.0.0.1:${info.port}`;
  }

  /** The environment a worker would have to reach it. */
  env(overrides: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
    return { CONVEYOR_S3_ENDPOINT: this.endpoint, AWS_ACCESS_KEY_ID: S3RVER_KEY.id, AWS_SECRET_ACCESS_KEY: S3RVER_KEY.secret, AWS_REGION: "us-east-1", ...overrides };
  }

  async stop(): Promise<void> {
    await this.server?.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
