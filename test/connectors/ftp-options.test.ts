import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFtpConnector } from "../../connectors/ftp.js";
import { ConveyorError } from "../../src/errors.js";
import { capturingContext } from "./conformance-kit.js";
import { ftpTarget } from "./ftp-target.js";

async function failure(promise: Promise<unknown>): Promise<ConveyorError> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ConveyorError);
  return err as ConveyorError;
}

describe("ftp use_pasv_address", () => {
  // The server refuses EPSV and advertises an address it does not listen on, as a server behind NAT does.
  let target: Awaited<ReturnType<typeof ftpTarget>>;
  beforeAll(async () => {
    target = await ftpTarget("none", {}, { blacklist: ["EPSV"], pasvAddress: () => "127.0.0.2" });
    await target.files.write("n.csv", "nat");
  });
  afterAll(async () => target.close());

  it("reuses the control host when use_pasv_address is false", async () => {
    const connector = createFtpConnector({ ...target.connection, use_pasv_address: false }, capturingContext().context);
    expect((await connector.list()).map((f) => f.name)).toEqual(["n.csv"]);
    await connector.close();
  });

  it("follows the PASV address by default, and fails when it is unreachable", async () => {
    const connector = createFtpConnector(target.connection, capturingContext().context, { retryBaseDelayMs: 10 });
    const err = await failure(connector.list());
    await connector.close();
    expect(["transfer", "connect", "protocol"]).toContain(err.code);
  });
});

describe("ftp connecting", () => {
  let silent: net.Server;
  let port = 0;
  let accepted = 0;
  const sockets: net.Socket[] = [];
  beforeAll(async () => {
    // Accepts TCP and never greets: what a hung server looks like.
    silent = net.createServer((socket) => {
      accepted++;
      sockets.push(socket);
      socket.on("error", () => undefined);
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    port = (silent.address() as net.AddressInfo).port;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });

  it("times out a server that never greets, after three attempts", async () => {
    const connection = { type: "ftp" as const, address: "127.0.0.1", port, username: "u", password: "secret-pass-1", path: "/" };
    const connector = createFtpConnector(connection, capturingContext().context, { connectTimeoutMs: 400, retryBaseDelayMs: 10 });
    const err = await failure(connector.list());
    await connector.close();
    expect(err.code).toBe("timeout");
    expect(accepted).toBe(3);
  });

  it("says connect for a refused port, retried", async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const freePort = (closed.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const connection = { type: "ftp" as const, address: "127.0.0.1", port: freePort, username: "u", password: "secret-pass-1", path: "/" };
    const connector = createFtpConnector(connection, capturingContext().context, { retryBaseDelayMs: 10 });
    const err = await failure(connector.list());
    await connector.close();
    expect(err.code).toBe("connect");
    expect(err.retryable).toBe(true);
    expect(err.hint).toContain("connection.address");
  });
});
