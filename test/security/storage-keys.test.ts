import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ListObjectsV2Command, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { S3StorageConnector } from "../../connectors/storage-s3.js";
import { isPlainName } from "../../connectors/storage-paths.js";
import type { Connector } from "../../connectors/types.js";
import { memoryContext } from "../helpers/memory-context.js";
import { S3RVER_KEY, S3TestServer } from "../helpers/s3-server.js";
import { refusal, storageFile } from "./storage-refusals.js";

/**
 * S3 storage has no links, but a key is a path a tenant writes: `..`, a
 * leading slash or empty segments must never reach outside the account's
 * prefix (`tenants/demo/`), nor may a message show that prefix.
 */
const s3 = new S3TestServer();
let raw: S3Client;
beforeAll(async () => {
  await s3.start();
  raw = new S3Client({ endpoint: s3.endpoint, forcePathStyle: true, region: "us-east-1", credentials: { accessKeyId: S3RVER_KEY.id, secretAccessKey: S3RVER_KEY.secret } });
  await raw.send(new PutObjectCommand({ Bucket: s3.bucket, Key: "tenants/bob/private/secret.csv", Body: "bob's secret\n" }));
  await raw.send(new PutObjectCommand({ Bucket: s3.bucket, Key: "tenants/demo/in/own.csv", Body: "demo's own\n" }));
});
afterAll(async () => {
  raw.destroy();
  await s3.stop();
});

function connector(connPath = ""): Connector {
  return new S3StorageConnector("sds3", { type: "sds3", path: connPath }, memoryContext({ storage: `s3://${s3.bucket}/tenants` }, { apiUser: "demo" }), { env: s3.env() });
}

const file = storageFile;

async function keys(prefix: string): Promise<string[]> {
  const page = await raw.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: prefix }));
  return (page.Contents ?? []).map((o) => o.Key ?? "").sort();
}

describe("S3 storage keys stay in the account's prefix", () => {
  it("refuses paths that climb out with .., at read, write, delete and move", async () => {
    const src = path.join(mkdtempSync(path.join(tmpdir(), "conveyor-keys-")), "up.csv");
    writeFileSync(src, "planted\n");
    const c = connector("in");
    try {
      for (const p of [
        c.download(file("../../bob/private/secret.csv"), path.join(tmpdir(), "never.csv")),
        c.upload(src, "../../bob/private/planted.csv"),
        c.delete(file("../../bob/private/secret.csv")),
        c.move(file("own.csv"), "../../bob/private"),
        c.list("../.."),
      ]) {
        const err = await refusal(p);
        expect(err.code).toBe("unsafe_path");
        expect(err.message).toMatch(/climbs out of the storage root/);
        expect(`${err.message} ${err.hint ?? ""}`).not.toContain("tenants/");
      }
    } finally {
      await c.close();
    }
    expect(await keys("tenants/bob/")).toEqual(["tenants/bob/private/secret.csv"]);
  });

  it("keeps a leading slash and empty segments inside the account's folder", async () => {
    const src = path.join(mkdtempSync(path.join(tmpdir(), "conveyor-keys-")), "up.csv");
    writeFileSync(src, "x\n");
    const c = connector("in");
    try {
      await c.upload(src, "/top.csv");
      await c.upload(src, "sub//nested.csv");
      await c.upload(src, "./sub/../flat.csv");
    } finally {
      await c.close();
    }
    expect(await keys("tenants/demo/")).toEqual(["tenants/demo/in/flat.csv", "tenants/demo/in/own.csv", "tenants/demo/in/sub/nested.csv", "tenants/demo/in/top.csv"]);
    expect(await keys("tenants/bob/")).toEqual(["tenants/bob/private/secret.csv"]);
  });

  it("names a missing file and folder relative to the account, never the bucket's prefix", async () => {
    const c = connector("in");
    try {
      const missing = await refusal(c.download(file("gone.csv"), path.join(tmpdir(), "never.csv")));
      expect(missing.code).toBe("not_found");
      expect(missing.message).toContain("gone.csv");
      expect(missing.message).not.toContain("tenants/");
      const moved = await refusal(c.delete(file("gone.csv")));
      expect(moved.message).not.toContain("tenants/");
    } finally {
      await c.close();
    }
  });

  it("leaves out of a listing any key whose name would read back as another key", () => {
    for (const odd of ["", ".", "..", "a/b", "a\\b", "a\0b"]) expect(isPlainName(odd), JSON.stringify(odd)).toBe(false);
    expect(isPlainName("stock.csv")).toBe(true);
  });
});
