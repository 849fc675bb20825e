import { describe, expect, it } from "vitest";
import { ConveyorError } from "../../src/errors.js";
import { classifyError, type ErrorSite } from "../../connectors/errors.js";
import { normalizeBase, partName, remoteJoin, safeRelative, timestampedName } from "../../connectors/paths.js";
import { redactTrace } from "../../connectors/trace.js";
import { connectorSpecs, createConnector } from "../../connectors/index.js";
import { capturingContext } from "./conformance-kit.js";

const site: ErrorSite = { protocol: "ftp", server: "h:21", action: "download a.csv", phase: "operation" };

describe("remote paths", () => {
  it("keeps names under the connection's path", () => {
    expect(safeRelative("./in//a.csv")).toBe("in/a.csv");
    expect(remoteJoin("/data", "in/a.csv")).toBe("/data/in/a.csv");
    expect(remoteJoin(".", "a.csv")).toBe("a.csv");
    expect(normalizeBase("/data/")).toBe("/data");
    expect(partName("in/a.csv")).toBe("in/.a.csv.part");
  });

  it.each(["../a", "a/../../b", "/etc/passwd", "C:\\x", "a\\..\\..\\b", "a\0b"])("refuses %j", (name) => {
    expect(() => safeRelative(name)).toThrow(expect.objectContaining({ code: "unsafe_path" }));
  });

  it("adds a UTC timestamp before the extension", () => {
    const at = Date.UTC(2024, 0, 2, 3, 4, 5);
    expect(timestampedName("stock.csv", at)).toBe("stock-20240102-030405.csv");
    expect(timestampedName("README", at)).toBe("README-20240102-030405");
  });
});

describe("protocol traces", () => {
  it("redacts credential commands whatever the secret registry knows", () => {
    expect(redactTrace("> PASS hunter2")).toBe("> PASS ********");
    expect(redactTrace("A1 LOGIN user pw")).toBe("A1 LOGIN ********");
    expect(redactTrace("> AUTH PLAIN AGZvbwBiYXI=")).toBe("> AUTH ********");
    expect(redactTrace("> USER bob")).toBe("> USER bob");
  });
});

describe("error classification", () => {
  const ftpError = (code: number, message: string): Error => Object.assign(new Error(message), { code });
  it.each([
    [ftpError(530, "Login incorrect"), "auth", false],
    [ftpError(550, "No such file"), "not_found", false],
    [ftpError(550, "Permission denied"), "protocol", false],
    [ftpError(421, "Too many users"), "connect", true],
    [ftpError(426, "Connection closed; transfer aborted"), "transfer", true],
    [Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }), "transfer", true],
    [Object.assign(new Error("self-signed certificate"), { code: "DEPTH_ZERO_SELF_SIGNED_CERT" }), "tls", false],
    [Object.assign(new Error("All configured authentication methods failed"), { level: "client-authentication" }), "auth", false],
    [Object.assign(new Error("No such file"), { code: 2 }), "not_found", false],
    [Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }), "connect", true],
  ])("%s → %s", (err, code, retryable) => {
    const out = classifyError(err, site);
    expect(out).toBeInstanceOf(ConveyorError);
    expect([out.code, out.retryable]).toEqual([code, retryable]);
    expect(out.message).toContain("h:21");
  });
});

describe("registry", () => {
  it("maps types to connectors and names the allowed ones otherwise", () => {
    expect(connectorSpecs().map((s) => s.type)).toEqual(expect.arrayContaining(["ftp", "ftps", "sftp"]));
    const context = capturingContext().context;
    expect(createConnector({ type: "sftp", address: "127.0.0.1" }, context).type).toBe("sftp");
    expect(() => createConnector({ type: "nope" as "ftp" }, context)).toThrow(/allowed: .*ftp/);
  });
});
