import { mkdtempSync, rmSync } from "node:fs";
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
const S3rver = createRequire(import.meta.url)("s3rver") as S3rverCtor;

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
