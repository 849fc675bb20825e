import dns from "node:dns";
import { mkdirSync, mkdtempSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { createEmailConnector } from "../../connectors/email.js";
import { createFtpConnector } from "../../connectors/ftp.js";
import { passiveHost } from "../../connectors/ftp-session.js";
import { HttpConnector } from "../../connectors/http.js";
import { emailSpec } from "../../connectors/email-spec.js";
import { httpSpec } from "../../connectors/http-spec.js";
import { completeConnector } from "../../connectors/index.js";
import { isPrivateAddress } from "../../connectors/net-guard.js";
import { createSftpConnector } from "../../connectors/sftp.js";
import { closeSmtpPools } from "../../connectors/smtp-pool.js";
import { createStorageConnector } from "../../connectors/storage.js";
import type { ConnectionConfig, Connector, ConnectorContext } from "../../connectors/types.js";
import { ConveyorError } from "../../src/errors.js";
import { startTestDaemon, stockDefinition } from "../daemon/daemon-harness.js";
import { FeedServer } from "../helpers/http-feed-server.js";
import { memoryContext } from "../helpers/memory-context.js";
import { TestSftpServer } from "../helpers/sftp-server.js";
import { SmtpCapture } from "../helpers/smtp-capture.js";

/**
 * Issue #24: a tenant's definition must not reach the worker's own network
 * through any connector, and the refusal must not tell an open port from a
 * closed one. Every socket is intercepted at net.Socket.prototype.connect,
 * which node's net and tls and every protocol library here go through: a
 * refusal test fails (and connects nowhere) if a connector opens a socket.
 */
const FORMS = ["127.0.0.1", "[::1]", "::1", "[::127.0.0.1]", "[::ffff:7f00:1]", "[64:ff9b::7f00:1]", "10.0.0.1", "169.254.169.254", "localhost"];

interface Attempt {
  host: string;
  port: number;
}

const attempts: Attempt[] = [];
const realConnect = net.Socket.prototype.connect;

function targetOf(args: unknown[]): Attempt {
  // net.connect hands the socket its normalized arguments as one array.
  const [first, second] = Array.isArray(args[0]) ? (args[0] as unknown[]) : args;
  if (typeof first === "object" && first !== null) {
    const o = first as { host?: string; port?: number | string };
    return { host: o.host ?? "localhost", port: Number(o.port) };
  }
  return { host: typeof second === "string" ? second : "localhost", port: Number(first) };
}

/**
 * Records every socket and lets through only loopback sockets to `allowedPorts`;
 * any other fails as a refused connection would, without ever being dialled.
 */
function interceptSockets(allowedPorts: () => number[]): void {
  vi.spyOn(net.Socket.prototype, "connect").mockImplementation(function (this: net.Socket, ...args: unknown[]) {
    const target = targetOf(args);
    attempts.push(target);
    if (target.host === "127.0.0.1" && allowedPorts().includes(target.port)) return Reflect.apply(realConnect, this, args) as net.Socket;
    process.nextTick(() => this.destroy(new Error(`blocked by the test: a socket to ${target.host} port ${target.port} was opened`)));
    return this;
  });
}

type Kind = "ftp" | "ftps" | "sftp" | "http" | "https" | "imap";
const KINDS: Kind[] = ["ftp", "ftps", "sftp", "http", "https", "imap"];

function connectorFor(kind: Kind, host: string, port: number, ctx: ConnectorContext): Connector {
  const fast = { connectTimeoutMs: 2_000, retryBaseDelayMs: 1 };
  switch (kind) {
    case "ftp":
    case "ftps":
      return createFtpConnector({ type: kind, address: host, port, username: "u", password: "guard-pass-1", path: "/" }, ctx, fast);
    case "sftp":
      return createSftpConnector({ type: "sftp", address: host, port, username: "u", password: "guard-pass-1", path: "/" }, ctx, fast);
    case "http":
    case "https": {
      const bracketed = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
      const conn: ConnectionConfig = { type: "http", address: `${kind}://${bracketed}:${port}/feed.json`, method: "GET" };
      return completeConnector(httpSpec, new HttpConnector(conn, ctx, { retry: { attempts: 1 } }));
    }
    case "imap":
      return completeConnector(emailSpec, createEmailConnector({ type: "email", address: host, port, username: "u", password: "guard-pass-1" }, ctx, { retryBaseDelayMs: 1 }));
  }
}

async function refusal(kind: Kind, host: string, port: number, ctx: ConnectorContext): Promise<ConveyorError> {
  const c = connectorFor(kind, host, port, ctx);
  try {
    const err = await c.test().then(() => undefined, (e: unknown) => e);
    expect(err, `${kind} ${host}`).toBeInstanceOf(ConveyorError);
    return err as ConveyorError;
  } finally {
    await c.close();
  }
}

describe("address classification", () => {
  it("treats loopback, private, link-local, CGNAT, reserved and their IPv6 wrappings as private", () => {
    const privateForms = [
      ...["127.0.0.1", "127.255.0.9", "10.0.0.1", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "224.0.0.1", "255.255.255.255"],
      ...["::1", "::", "[::1]", "fe80::1", "fe80::1%eth0", "fd00::1", "fc00::5", "ff02::1", "fec0::1", "100::1", "2001:db8::1"],
      // IPv4-mapped, IPv4-compatible, SIIT, NAT64 (well-known and local-use), 6to4 and Teredo forms of private IPv4.
      ...["::ffff:127.0.0.1", "::ffff:7f00:1", "::ffff:a00:1", "::127.0.0.1", "::7f00:1", "::a9fe:a9fe", "::ffff:0:7f00:1"],
      ...["64:ff9b::7f00:1", "64:ff9b::127.0.0.1", "64:ff9b::a00:1", "64:ff9b:1::808:808", "2002:7f00:1::1", "2001:0:4136:e378:8000:63bf:80ff:fffe"],
      ...["0:0:0:0:0:ffff:7f00:1", "[64:ff9b::7f00:1]", "::FFFF:7F00:1"],
    ];
    for (const address of privateForms) expect(isPrivateAddress(address), address).toBe(true);
    const publicForms = ["93.184.216.34", "8.8.8.8", "172.32.0.1", "2606:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1", "db.example.com"];
    for (const address of publicForms) expect(isPrivateAddress(address), address).toBe(false);
  });

  it("sends an FTP passive data connection nowhere the guard would refuse", () => {
    // A server on a public address advertising a private one gets its control address used instead.
    expect(passiveHost("127.0.0.1", "93.184.216.34", true, false)).toBe("93.184.216.34");
    expect(passiveHost("169.254.169.254", "93.184.216.34", true, false)).toBe("93.184.216.34");
    expect(passiveHost("10.0.0.7", "93.184.216.34", true, true)).toBe("93.184.216.34");
    expect(passiveHost("93.184.216.35", "93.184.216.34", true, false)).toBe("93.184.216.35");
    expect(passiveHost("93.184.216.35", "93.184.216.34", false, false)).toBe("93.184.216.34");
    // Allowed private hosts (tests, internal workers) follow what the server says.
    expect(passiveHost("127.0.0.2", "127.0.0.1", true, true)).toBe("127.0.0.2");
  });
});

describe("every connector refuses a private host before any socket opens", () => {
  let listener: net.Server;
  let openPort = 0;
  let closedPort = 0;
  let accepted = 0;
  const ctx = memoryContext({ allowPrivateHosts: false });

  beforeAll(async () => {
    // An open port that counts what it accepts, and a port nothing listens on.
    listener = net.createServer((socket) => {
      accepted++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
    openPort = (listener.address() as net.AddressInfo).port;
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    closedPort = (probe.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
  });
  afterAll(async () => new Promise<void>((resolve) => listener.close(() => resolve())));
  beforeEach(() => {
    attempts.length = 0;
    interceptSockets(() => []);
  });
  afterEach(() => vi.restoreAllMocks());

  for (const kind of KINDS) {
    it(`${kind}: ${FORMS.join(", ")}`, async () => {
      for (const host of FORMS) {
        const open = await refusal(kind, host, openPort, ctx);
        expect(open.code, `${kind} ${host}`).toBe("private_host");
        expect(open.message).toMatch(/private, loopback or reserved address/);
        expect(open.describe()).toContain("CONVEYOR_ALLOW_PRIVATE_HOSTS");
        // The port's state cannot be read from the answer: same words, and no port in them.
        const closed = await refusal(kind, host, closedPort, ctx);
        expect(closed.describe()).toBe(open.describe());
        expect(open.describe()).not.toContain(String(openPort));
        expect(open.retryable).toBe(false);
      }
      expect(attempts).toEqual([]);
      expect(accepted).toBe(0);
    });
  }

  it("http: an oauth token address is held to the same guard as the feed address", async () => {
    for (const token of ["http://169.254.169.254/latest/meta-data/iam/security-credentials/", `http://[64:ff9b::a9fe:a9fe]:${openPort}/token`]) {
      const conn: ConnectionConfig = { type: "http", address: "http://feed.example/stock.json", method: "GET", oauth: { address: token, client_id: "c", client_secret: "guard-secret-7" } };
      const c = new HttpConnector(conn, ctx, { retry: { attempts: 1 } });
      const err = await c.test().then(() => undefined, (e: unknown) => e);
      await c.close();
      expect(err, token).toBeInstanceOf(ConveyorError);
      expect((err as ConveyorError).code, token).toBe("private_host");
    }
    expect(attempts).toEqual([]);
    expect(accepted).toBe(0);
  });

  it("names no resolved address for a host name, so internal DNS is not mapped through it", async () => {
    const err = await refusal("sftp", "localhost", openPort, ctx);
    expect(err.message).toContain("sftp host localhost resolves to a private");
    expect(err.describe()).not.toContain("127.0.0.1");
    expect(JSON.stringify(err.details)).not.toContain("127.0.0.1");
  });
});

describe("a name is resolved once and the checked address is the one dialled", () => {
  const ctx = memoryContext({ allowPrivateHosts: false });
  let lookups = 0;

  beforeEach(() => {
    attempts.length = 0;
    lookups = 0;
    interceptSockets(() => []);
    // A rebinding resolver: public for the first question, loopback for every later one.
    vi.spyOn(dns, "lookup").mockImplementation(((_host: string, _options: unknown, callback: (err: null, list: dns.LookupAddress[]) => void) => {
      lookups++;
      const address = lookups === 1 ? "93.184.216.34" : "127.0.0.1";
      process.nextTick(() => callback(null, [{ address, family: 4 }]));
    }) as unknown as typeof dns.lookup);
  });
  afterEach(() => vi.restoreAllMocks());

  for (const kind of KINDS) {
    it(kind, async () => {
      const err = await refusal(kind, "rebind.example", 40_021, ctx);
      // The intercepted socket is the first and only one, aimed at the address that passed the check.
      expect(err.message).toContain("blocked by the test");
      expect(attempts).toEqual([{ host: "93.184.216.34", port: 40_021 }]);
      expect(lookups).toBe(1);
    });
  }
});

describe("what the guard leaves alone", () => {
  let http: FeedServer;
  beforeAll(async () => {
    http = new FeedServer();
    await http.start();
  });
  afterAll(async () => http.stop());
  beforeEach(() => (attempts.length = 0));
  afterEach(() => vi.restoreAllMocks());

  it("never follows an http redirect, so a 302 to the metadata address goes nowhere", async () => {
    http.routes.set("/hop", (_req, res) => void res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" }).end());
    interceptSockets(() => [http.port]);
    const c = new HttpConnector({ type: "http", address: `${http.base}/hop`, method: "GET" }, memoryContext({ allowPrivateHosts: true }), { retry: { attempts: 1 } });
    const err = await c.test().then(() => undefined, (e: unknown) => e);
    await c.close();
    expect(err).toBeInstanceOf(ConveyorError);
    expect((err as ConveyorError).message).toContain("HTTP 302");
    expect(attempts.every((a) => a.host === "127.0.0.1" && a.port === http.port)).toBe(true);
  });

  it("lets the operator's SFTP storage (sdsftp, sds3) on loopback through", async () => {
    const root = mkdtempSync(path.join(tmpdir(), "guard-storage-"));
    mkdirSync(path.join(root, "demo"));
    const server = await new TestSftpServer({ root, username: "store", password: "store-pass-9" }).start();
    try {
      interceptSockets(() => [server.port]);
      const ctx = memoryContext({ allowPrivateHosts: false, storage: `sftp://store:store-pass-9@127.0.0.1:${server.port}/` });
      for (const type of ["sdsftp", "sds3"] as const) {
        const c = createStorageConnector({ type, path: "" }, ctx, { connectTimeoutMs: 5_000 });
        expect((await c.test()).ok).toBe(true);
        await c.close();
      }
      expect(attempts.length).toBeGreaterThan(0);
    } finally {
      await server.close();
    }
  });

  it("lets the operator's SMTP relay on loopback through: a tenant names recipients, never the host", async () => {
    const smtp = await new SmtpCapture("relay-pass-3").start();
    try {
      interceptSockets(() => [smtp.port]);
      const ctx = memoryContext({ allowPrivateHosts: false, smtpUrl: smtp.url() });
      const c = createEmailConnector({ type: "email", address: "ops@[127.0.0.1]" }, ctx);
      expect((await c.test()).ok).toBe(true);
      await c.close();
      expect(attempts.every((a) => a.host === "127.0.0.1" && a.port === smtp.port)).toBe(true);
    } finally {
      closeSmtpPools();
      await smtp.close();
    }
  });
});

describe("a tenant's automation through the daemon API", () => {
  it("cannot scan the daemon's loopback with an sftp automation: the run fails with private_host, no socket accepted", async () => {
    let accepted = 0;
    const listener = net.createServer((socket) => {
      accepted++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
    const port = (listener.address() as net.AddressInfo).port;
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const closedPort = (probe.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const t = await startTestDaemon();
    try {
      const errors: unknown[] = [];
      for (const target of [port, closedPort]) {
        const scan = stockDefinition({ name: `Scan ${target}`, connection: { type: "sftp", address: "[::ffff:7f00:1]", port: target, username: "u", password: "scan-pass-5", path: "/" } });
        const created = await t.request("POST", "/v3/automations/custom", scan);
        expect(created.status).toBe(200);
        const run = await t.request("GET", `/v3/automations/custom/${String(created.body.id)}/run?wait=30`);
        expect(run.body.run).toMatchObject({ outcome: "failed", error: { code: "private_host" } });
        errors.push((run.body.run as { error: unknown }).error);
      }
      // An open and a closed port answer alike, so the answer maps nothing.
      expect(errors[0]).toEqual(errors[1]);
      expect(errors[0]).toEqual({
        code: "private_host",
        message: "sftp host [::ffff:7f00:1] is a private, loopback or reserved address; connections into the worker's own network are refused",
        hint: "use the server's public address, or set CONVEYOR_ALLOW_PRIVATE_HOSTS=true (--allow-private-hosts) if this worker may reach internal hosts",
      });
      expect(accepted).toBe(0);
    } finally {
      await t.close();
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    }
  });
});
