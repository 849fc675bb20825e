import net from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createConnector } from "../../connectors/index.js";
import { createSftpConnector } from "../../connectors/sftp.js";
import { ConveyorError } from "../../src/errors.js";
import { capturingContext } from "./conformance-kit.js";
import { connectorConformance } from "./conformance.js";
import { sftpTarget } from "./sftp-target.js";
import { readableKeyPair } from "../helpers/ssh-keys.js";

connectorConformance("sftp", () => sftpTarget());

describe("sftp host keys and private keys", () => {
  const passphrase = "correct horse battery";
  const keys = readableKeyPair({ passphrase, cipher: "aes256-cbc", rounds: 16 });
  let target: Awaited<ReturnType<typeof sftpTarget>>;
  beforeAll(async () => {
    target = await sftpTarget({}, keys.public);
  });
  afterAll(async () => target.close());

  it("accepts any host key when none is pinned, and reports its fingerprint", async () => {
    const connector = createConnector(target.connection, capturingContext().context);
    const result = await connector.test();
    await connector.close();
    expect(result.facts.host_key).toBe(target.server.fingerprint);
  });

  it("connects when the pinned host key matches, with or without the SHA256: prefix", async () => {
    for (const pin of [target.server.fingerprint, target.server.fingerprint.slice(7)]) {
      const connector = createConnector({ ...target.connection, host_key: pin }, capturingContext().context);
      expect((await connector.test()).ok).toBe(true);
      await connector.close();
    }
  });

  it("refuses a mismatched host key once, naming the fingerprint offered", async () => {
    const before = target.proxy.connections;
    const connector = createConnector({ ...target.connection, host_key: "SHA256:bm90IHRoZSByaWdodCBrZXkgYXQgYWxsIGhlcmU" }, capturingContext().context);
    const err = await connector.list().catch((e: unknown) => e);
    await connector.close();
    expect(err).toBeInstanceOf(ConveyorError);
    expect((err as ConveyorError).code).toBe("host_key");
    expect((err as ConveyorError).message).toContain(target.server.fingerprint);
    expect(target.proxy.connections - before).toBe(1);
  });

  it("logs in with a private key and its passphrase", async () => {
    const connection = { ...target.connection, is_key_file: true, password: keys.private, passphrase };
    const captured = capturingContext();
    const connector = createConnector(connection, captured.context);
    expect((await connector.test()).ok).toBe(true);
    await connector.close();
    expect(captured.lines.join("")).not.toContain(passphrase);
  });

  it("says auth for a wrong passphrase, without retrying", async () => {
    const before = target.proxy.connections;
    const connection = { ...target.connection, is_key_file: true, password: keys.private, passphrase: "wrong passphrase" };
    const connector = createConnector(connection, capturingContext().context);
    const err = await connector.test().catch((e: unknown) => e);
    await connector.close();
    expect((err as ConveyorError).code).toBe("auth");
    expect((err as ConveyorError).message).not.toContain("wrong passphrase");
    expect(target.proxy.connections - before).toBeLessThanOrEqual(1);
  });
});

describe("sftp connecting", () => {
  it("sends each message at once: the connection's socket has Nagle's algorithm off", async () => {
    const target = await sftpTarget();
    const noDelay = vi.spyOn(net.Socket.prototype, "setNoDelay");
    try {
      const connector = createConnector(target.connection, capturingContext().context);
      expect((await connector.test()).ok).toBe(true);
      await connector.close();
      // Small messages (a read request, a window adjustment) held back until the server acknowledges the last ones stalled downloads.
      expect(noDelay).toHaveBeenCalledWith(true);
    } finally {
      noDelay.mockRestore();
      await target.close();
    }
  });

  it("times out a server that accepts TCP but never speaks SSH, after three attempts", async () => {
    const target = await sftpTarget();
    try {
      target.proxy.stall();
      const before = target.proxy.connections;
      const started = Date.now();
      const connector = createSftpConnector(target.connection, capturingContext().context, { connectTimeoutMs: 500, retryBaseDelayMs: 10 });
      const err = await connector.list().catch((e: unknown) => e);
      await connector.close();
      expect((err as ConveyorError).code).toBe("timeout");
      expect((err as ConveyorError).retryable).toBe(true);
      expect(target.proxy.connections - before).toBe(3);
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      target.proxy.heal();
      await target.close();
    }
  });
});
