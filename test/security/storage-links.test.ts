import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, renameSync, symlinkSync, writeFileSync, existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createStorageConnector } from "../../connectors/storage.js";
import { openConfinedDir } from "../../connectors/storage-confined.js";
import type { Connector } from "../../connectors/types.js";
import { ConveyorError } from "../../src/errors.js";
import { memoryContext } from "../helpers/memory-context.js";
import { TestSftpServer } from "../helpers/sftp-server.js";
import { refusal, storageFile } from "./storage-refusals.js";

/**
 * A hostile tenant (`demo`) with links in its storage folder: to another
 * account's files (`bob`), to a folder outside the storage, to a file. Every
 * operation refuses them with unsafe_path, names the link relative to the
 * account's storage and never the server's folder.
 */
let storage: string;
let outside: string;
let demo: string;

beforeEach(() => {
  ({ storage, outside, demo } = layout(mkdtempSync(path.join(tmpdir(), "conveyor-links-"))));
});

/** `<work>/storage/{demo,bob}` and `<work>/outside`, with demo's links into both. */
function layout(work: string): { storage: string; outside: string; demo: string } {
  const storage = path.join(work, "storage");
  const outside = path.join(work, "outside");
  const demo = path.join(storage, "demo");
  mkdirSync(path.join(storage, "bob", "private"), { recursive: true });
  writeFileSync(path.join(storage, "bob", "private", "secret.csv"), "bob's secret\n");
  mkdirSync(outside);
  writeFileSync(path.join(outside, "passwd.csv"), "outside the storage\n");
  mkdirSync(path.join(demo, "in", "deep"), { recursive: true });
  writeFileSync(path.join(demo, "in", "own.csv"), "demo's own\n");
  symlinkSync("../bob/private", path.join(demo, "link"));
  symlinkSync(outside, path.join(demo, "abs"));
  symlinkSync("../../../bob/private", path.join(demo, "in", "deep", "nested"));
  symlinkSync("../../bob/private/secret.csv", path.join(demo, "in", "secret.csv"));
  symlinkSync(path.join(outside, "passwd.csv"), path.join(demo, "in", "passwd.csv"));
  // A link that stays inside the account: refused as well (one rule, see storage-local.ts).
  symlinkSync("in", path.join(demo, "alias"));
  return { storage, outside, demo };
}

function connector(connPath = ""): Connector {
  return createStorageConnector({ type: "sdsftp", path: connPath }, memoryContext({ storage }, { apiUser: "demo" }));
}

const file = storageFile;

/** The refusal is unsafe_path, names the link as the account sees it, and no server path. */
async function refusedAt(p: Promise<unknown>, link: string): Promise<void> {
  const err = await refusal(p);
  expect(err.code).toBe("unsafe_path");
  expect(err.message).toContain(`${link} in the account's storage is a link`);
  expectNoServerPath(err);
}

function expectNoServerPath(err: ConveyorError): void {
  const text = JSON.stringify({ message: err.message, hint: err.hint, details: err.details });
  expect(text).not.toContain(storage);
  expect(text).not.toContain(outside);
  expect(text).not.toContain(tmpdir());
}

describe("storage links: list", () => {
  it("refuses a relative folder link to another account as the connection's path", async () => {
    await refusedAt(connector("link").list(), "/link");
  });

  it("refuses an absolute folder link to outside the storage", async () => {
    await refusedAt(connector("abs").list(), "/abs");
    await refusedAt(connector().list("abs"), "/abs");
  });

  it("refuses a folder link in a nested folder", async () => {
    await refusedAt(connector("in").list("deep/nested"), "/in/deep/nested");
  });

  it("refuses a link that stays inside the account", async () => {
    await refusedAt(connector("alias").list(), "/alias");
  });

  it("leaves file links out of a listing", async () => {
    const names = (await connector("in").list()).map((f) => f.name);
    expect(names).toEqual(["own.csv"]);
  });
});

describe("storage links: read", () => {
  it("refuses a file link, relative or absolute, and a file through a folder link", async () => {
    const local = path.join(mkdtempSync(path.join(tmpdir(), "conveyor-links-dl-")), "got.csv");
    await refusedAt(connector("in").download(file("secret.csv"), local), "/in/secret.csv");
    await refusedAt(connector("in").download(file("passwd.csv"), local), "/in/passwd.csv");
    await refusedAt(connector().download(file("link/secret.csv"), local), "/link");
    await refusedAt(connector().download(file("abs/passwd.csv"), local), "/abs");
    expect(existsSync(local)).toBe(false);
    expect(existsSync(`${local}.part`)).toBe(false);
  });

  it("refuses a FIFO planted under a file name instead of waiting on it", async () => {
    execFileSync("mkfifo", [path.join(demo, "in", "pipe.csv")]);
    const err = await refusal(connector("in").download(file("pipe.csv"), path.join(tmpdir(), "never.csv")));
    expect(err.code).toBe("unsafe_path");
    expect(err.message).toContain("/in/pipe.csv is not a regular file");
  });

  it("still reads the account's own files", async () => {
    const local = path.join(mkdtempSync(path.join(tmpdir(), "conveyor-links-dl-")), "own.csv");
    await connector("in").download(file("own.csv"), local);
    expect(readFileSync(local, "utf8")).toBe("demo's own\n");
  });
});

describe("storage links: write", () => {
  it("refuses an upload through a folder link and onto a file link, writing nothing outside", async () => {
    const src = path.join(mkdtempSync(path.join(tmpdir(), "conveyor-links-up-")), "up.csv");
    writeFileSync(src, "planted\n");
    await refusedAt(connector("link").upload(src, "planted.csv"), "/link");
    await refusedAt(connector().upload(src, "abs/planted.csv"), "/abs");
    await refusedAt(connector().upload(src, "in/deep/nested/planted.csv"), "/in/deep/nested");
    await refusedAt(connector("in").upload(src, "secret.csv"), "/in/secret.csv");
    expect(existsSync(path.join(storage, "bob", "private", "planted.csv"))).toBe(false);
    expect(existsSync(path.join(outside, "planted.csv"))).toBe(false);
    expect(readFileSync(path.join(storage, "bob", "private", "secret.csv"), "utf8")).toBe("bob's secret\n");
  });

  it("refuses a link planted at the upload's temporary name", async () => {
    const src = path.join(mkdtempSync(path.join(tmpdir(), "conveyor-links-up-")), "up.csv");
    writeFileSync(src, "planted\n");
    symlinkSync(path.join(outside, "passwd.csv"), path.join(demo, "in", ".x.csv.part"));
    await refusedAt(connector("in").upload(src, "x.csv"), "/in/.x.csv.part");
    expect(readFileSync(path.join(outside, "passwd.csv"), "utf8")).toBe("outside the storage\n");
  });

  it("refuses to make folders through a link", async () => {
    await refusedAt(connector().mkdir("link/new"), "/link");
    expect(existsSync(path.join(storage, "bob", "private", "new"))).toBe(false);
  });
});

describe("storage links: after_import", () => {
  it("refuses to delete a file link or a file through a folder link, keeping the target", async () => {
    await refusedAt(connector("in").delete(file("secret.csv")), "/in/secret.csv");
    await refusedAt(connector().delete(file("link/secret.csv")), "/link");
    expect(readFileSync(path.join(storage, "bob", "private", "secret.csv"), "utf8")).toBe("bob's secret\n");
  });

  it("refuses to move into a folder link, out of one, or a file link", async () => {
    await refusedAt(connector().move(file("in/own.csv"), "link"), "/link");
    await refusedAt(connector().move(file("in/own.csv"), "abs/taken"), "/abs");
    await refusedAt(connector().move(file("link/secret.csv"), "done"), "/link");
    await refusedAt(connector("in").move(file("secret.csv"), "done"), "/in/secret.csv");
    expect(readFileSync(path.join(demo, "in", "own.csv"), "utf8")).toBe("demo's own\n");
    expect(readFileSync(path.join(storage, "bob", "private", "secret.csv"), "utf8")).toBe("bob's secret\n");
    expect(existsSync(path.join(outside, "taken"))).toBe(false);
  });

  it("still moves the account's own file", async () => {
    expect(await connector("in").move(file("own.csv"), "done")).toBe("done/own.csv");
    expect(readFileSync(path.join(demo, "in", "done", "own.csv"), "utf8")).toBe("demo's own\n");
  });
});

describe("storage links: swapped between list and read (TOCTOU)", () => {
  it("refuses a folder swapped for a link after the listing", async () => {
    const c = connector("in");
    const [listed] = await c.list();
    if (!listed) throw new Error("nothing listed");
    renameSync(path.join(demo, "in"), path.join(demo, "in.old"));
    symlinkSync("../bob/private", path.join(demo, "in"));
    writeFileSync(path.join(storage, "bob", "private", "own.csv"), "bob's, under demo's name\n");
    const local = path.join(mkdtempSync(path.join(tmpdir(), "conveyor-links-dl-")), "got.csv");
    await refusedAt(c.download(listed, local), "/in");
    await refusedAt(c.delete(listed), "/in");
    expect(existsSync(local)).toBe(false);
  });

  it("keeps reading the folder it opened when the path is swapped for a link after the open", async () => {
    const dir = await openConfinedDir(demo, "in", "folder", false);
    try {
      renameSync(path.join(demo, "in"), path.join(demo, "in.old"));
      symlinkSync("../bob/private", path.join(demo, "in"));
      writeFileSync(path.join(storage, "bob", "private", "own.csv"), "bob's, under demo's name\n");
      // The open folder, not the name: what was checked is what is read.
      expect(await readFile(dir.child("own.csv"), "utf8")).toBe("demo's own\n");
    } finally {
      await dir.close();
    }
  });
});

describe("storage errors speak of the account's storage", () => {
  it("names a missing file relative to the account's storage, never the server's folder", async () => {
    const err = await refusal(connector("in").download(file("gone.csv"), path.join(tmpdir(), "never.csv")));
    expect(err.code).toBe("not_found");
    expect(err.message).toContain("/in/gone.csv");
    expectNoServerPath(err);
  });

  it("names a missing folder the same way", async () => {
    const err = await refusal(connector("nowhere").list());
    expect(err.code).toBe("not_found");
    expect(err.message).toContain("/nowhere");
    expectNoServerPath(err);
  });
});

describe("storage links on an SFTP storage server", () => {
  const work = mkdtempSync(path.join(tmpdir(), "conveyor-links-sftp-"));
  const server = new TestSftpServer({ root: work, username: "worker", password: "storage-pass" });
  let fixture: { storage: string; outside: string; demo: string };
  beforeAll(async () => {
    fixture = layout(work);
    await server.start();
  });
  afterAll(() => server.close());

  function sftp(connPath = ""): Connector {
    const url = `sftp://worker:storage-pass@127.0.0.1:${server.port}/storage?host_key=${encodeURIComponent(server.fingerprint)}`;
    return createStorageConnector({ type: "sdsftp", path: connPath }, memoryContext({ storage: url }, { apiUser: "demo" }));
  }

  /** Refused with the link named as the account sees it, and neither the server's folder nor this machine's. */
  async function refusedOver(c: Connector, p: Promise<unknown>, link: string): Promise<void> {
    try {
      const err = await refusal(p);
      expect(err.code).toBe("unsafe_path");
      expect(err.message).toContain(`${link} in the account's storage is a link`);
      const text = JSON.stringify({ message: err.message, hint: err.hint, details: err.details });
      expect(text).not.toContain("/storage/demo");
      expect(text).not.toContain(work);
    } finally {
      await c.close();
    }
  }

  it("refuses folder links, relative, absolute and nested, at list", async () => {
    for (const [connPath, folder, link] of [["link", "", "/link"], ["", "abs", "/abs"], ["in", "deep/nested", "/in/deep/nested"], ["alias", "", "/alias"]] as const) {
      const c = sftp(connPath);
      await refusedOver(c, c.list(folder), link);
    }
  });

  it("refuses file links and files through folder links at read", async () => {
    const local = path.join(mkdtempSync(path.join(tmpdir(), "conveyor-links-sdl-")), "got.csv");
    for (const [p, link] of [["in/secret.csv", "/in/secret.csv"], ["in/passwd.csv", "/in/passwd.csv"], ["link/secret.csv", "/link"]] as const) {
      const c = sftp();
      await refusedOver(c, c.download(file(p), local), link);
    }
    expect(existsSync(local)).toBe(false);
  });

  it("refuses writes and after_import through links, touching nothing outside", async () => {
    const src = path.join(mkdtempSync(path.join(tmpdir(), "conveyor-links-sup-")), "up.csv");
    writeFileSync(src, "planted\n");
    let c = sftp();
    await refusedOver(c, c.upload(src, "abs/planted.csv"), "/abs");
    c = sftp();
    await refusedOver(c, c.delete(file("in/secret.csv")), "/in/secret.csv");
    c = sftp();
    await refusedOver(c, c.move(file("in/own.csv"), "link"), "/link");
    expect(existsSync(path.join(fixture.outside, "planted.csv"))).toBe(false);
    expect(readFileSync(path.join(fixture.storage, "bob", "private", "secret.csv"), "utf8")).toBe("bob's secret\n");
    expect(existsSync(path.join(fixture.storage, "bob", "private", "own.csv"))).toBe(false);
  });

  it("still lists the account's own files, and reports its folder, not the server's", async () => {
    const c = sftp("in");
    try {
      expect((await c.list()).map((f) => f.name)).toEqual(["own.csv"]);
      expect((await c.test()).facts.path).toBe("/in");
    } finally {
      await c.close();
    }
  });
});
