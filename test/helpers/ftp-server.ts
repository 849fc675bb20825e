import { Transform, type Readable, type TransformCallback, type Writable } from "node:stream";
import { FileSystem, FtpSrv, type FtpConnection } from "ftp-srv";
import { selfSignedCertificate } from "./tls-cert.js";

/**
 * A real FTP/FTPS server (ftp-srv) on loopback serving a local folder. Faults
 * are injected the way a failing server produces them: the file system under
 * the server cuts the connection, or stops feeding the data socket, after
 * some bytes of the next transfer.
 */
export type FtpTlsMode = "none" | "explicit" | "implicit";

export interface FtpServerOptions {
  root: string;
  username: string;
  password: string;
  tls?: FtpTlsMode;
  /** What PASV advertises; a function of the client's address. */
  pasvAddress?: () => string;
  /** Commands the server refuses, e.g. EPSV to force PASV. */
  blacklist?: string[];
}

type Fault = { kind: "drop" | "stall"; afterBytes: number; direction: "download" | "upload" };

/** ftp-srv insists on a bunyan-shaped logger; the tests want it quiet. */
interface QuietLog {
  child(): QuietLog;
  [level: string]: () => unknown;
}
const quietLog: QuietLog = {
  child(): QuietLog {
    return quietLog;
  },
  trace: (): void => undefined,
  debug: (): void => undefined,
  info: (): void => undefined,
  warn: (): void => undefined,
  error: (): void => undefined,
  fatal: (): void => undefined,
};

function faultStream(fault: Fault, connection: FtpConnection): Transform {
  let passed = 0;
  return new Transform({
    transform(chunk: Buffer, _enc: BufferEncoding, callback: TransformCallback) {
      const room = fault.afterBytes - passed;
      if (room > chunk.length) {
        passed += chunk.length;
        callback(null, chunk);
        return;
      }
      this.push(chunk.subarray(0, Math.max(0, room)));
      passed = fault.afterBytes;
      if (fault.kind === "stall") return; // never call back: the transfer hangs with its sockets open
      setTimeout(() => {
        const data = (connection as unknown as { connector?: { socket?: { destroy(): void } } }).connector?.socket;
        data?.destroy();
        (connection as unknown as { commandSocket: { destroy(): void } }).commandSocket.destroy();
      }, 20);
    },
  });
}

export class TestFtpServer {
  private server: FtpSrv | undefined;
  private fault: Fault | undefined;
  port = 0;
  loginAttempts = 0;

  constructor(private readonly options: FtpServerOptions) {}

  async start(): Promise<this> {
    const mode = this.options.tls ?? "none";
    const cert = mode === "none" ? undefined : selfSignedCertificate();
    const takeFault = (direction: Fault["direction"]): Fault | undefined => this.takeFault(direction);
    class FaultyFileSystem extends FileSystem {
      override read(fileName: string, opts?: { start?: number }): Promise<{ stream: Readable; clientPath: string }> {
        const fault = takeFault("download");
        return super.read(fileName, opts ?? {}).then((res: { stream: Readable; clientPath: string }) => {
          if (!fault) return res;
          const wrapped = res.stream.pipe(faultStream(fault, this.connection));
          return { stream: wrapped, clientPath: res.clientPath };
        });
      }
      override write(fileName: string, opts?: { append?: boolean; start?: number }): { stream: Writable; clientPath: string } {
        const fault = takeFault("upload");
        const res = super.write(fileName, opts ?? {}) as { stream: Writable; clientPath: string };
        if (!fault) return res;
        const front = faultStream(fault, this.connection);
        front.pipe(res.stream);
        return { stream: front, clientPath: res.clientPath };
      }
    }
    this.server = new FtpSrv({
      url: `${mode === "implicit" ? "ftps" : "ftp"}://127.0.0.1:0`,
      pasv_url: (this.options.pasvAddress ?? "127.0.0.1") as unknown as string,
      pasv_min: 40000,
      pasv_max: 49000,
      tls: cert ? { key: cert.key, cert: cert.cert } : false,
      anonymous: false,
      blacklist: this.options.blacklist ?? [],
      greeting: "conveyor test server",
      log: quietLog,
    });
    this.server.on("login", ({ connection, username, password }, resolve, reject) => {
      this.loginAttempts++;
      if (username === this.options.username && password === this.options.password) {
        resolve({ fs: new FaultyFileSystem(connection, { root: this.options.root, cwd: "/" }) });
      } else reject(new Error("Login incorrect"));
    });
    await this.server.listen();
    const inner = (this.server as unknown as { server: { address(): { port: number } } }).server;
    this.port = inner.address().port;
    return this;
  }

  private takeFault(direction: Fault["direction"]): Fault | undefined {
    const fault = this.fault;
    if (fault?.direction !== direction) return undefined;
    this.fault = undefined;
    return fault;
  }

  /** The next transfer in `direction` is cut after `afterBytes`: data and control sockets die. */
  dropNext(direction: Fault["direction"], afterBytes: number): void {
    this.fault = { kind: "drop", afterBytes, direction };
  }

  /** The next transfer in `direction` stops after `afterBytes` with its sockets left open. */
  stallNext(direction: Fault["direction"], afterBytes: number): void {
    this.fault = { kind: "stall", afterBytes, direction };
  }

  clearFaults(): void {
    this.fault = undefined;
  }

  async close(): Promise<void> {
    await this.server?.close();
  }
}
