import { describe, expect, it } from "vitest";
import Database from "better-sqlite3";
import { nativeWarning, sshNativeCrypto } from "../../connectors/native.js";

// The install must have built the native add-ons: without them the tests would still pass, only slower.
describe("native add-ons", () => {
  it("ssh2 runs on its compiled crypto binding, not the JavaScript fallback", () => {
    expect(sshNativeCrypto()).toBe(true);
    expect(nativeWarning()).toBeNull();
  });

  it("better-sqlite3 loads its binding", () => {
    const db = new Database(":memory:");
    expect(db.prepare("select sqlite_version() as v").get()).toMatchObject({ v: expect.stringMatching(/^3\./) });
    db.close();
  });
});
