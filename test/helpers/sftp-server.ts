import { createHash, timingSafeEqual } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import ssh2 from "ssh2";
import type { AuthContext, Connection, SFTPWrapper, Attributes, FileEntry } from "ssh2";
import { readableKeyPair } from "./ssh-keys.js";

const { Server, utils } = ssh2;
const { STATUS_CODE } = utils.sftp;

/**
 * A real SFTP server on loopback: ssh2's server speaking the SSH and SFTP v3
 * protocols, serving a local folder as its root. Password and public-key
 * logins; counts every login attempt so tests can prove a wrong password is
 * tried once.
 */
export interface SftpServerOptions {
  root: string;
  username: string;
  password: string;
  /** OpenSSH public key text accepted for `username`. */
  publicKey?: string;
  /** What a test does to a connection's SFTP channels, each by its number on the connection (0 first). */
  channels?: ChannelHooks;
}

export interface ChannelHooks {
  /** False refuses the channel, as a server at its cap of channels a connection does. */
  open?(channel: number): boolean;
  /** Awaited before the channel's SFTP subsystem is accepted: a server slow to set channels up. */
  accept?(channel: number): Promise<void>;
  /** Awaited before a read request is answered. */
  read?(channel: number, offset: number, length: number): Promise<void>;
}

type Handle = { kind: "file"; fd: number } | { kind: "dir"; dir: string; sent: boolean };

export class TestSftpServer {
  private server: InstanceType<typeof Server> | undefined;
  private readonly hostKey = readableKeyPair();
  private readonly clients = new Set<Connection>();
  port = 0;
  /** password and signed public-key attempts, not the protocol's probing `none`. */
  loginAttempts = 0;

  constructor(private readonly options: SftpServerOptions) {}

  /** What a client sees: `SHA256:` + unpadded base64, as OpenSSH prints it. */
  get fingerprint(): string {
    const parsed = utils.parseKey(this.hostKey.public);
    if (parsed instanceof Error) throw parsed;
    return `SHA256:${createHash("sha256").update(parsed.getPublicSSH()).digest("base64").replace(/=+$/, "")}`;
  }

  async start(): Promise<this> {
    this.server = new Server({ hostKeys: [this.hostKey.private] }, (client) => this.accept(client));
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    const address = this.server.address();
    if (address === null || typeof address === "string") throw new Error("no port");
    this.port = address.port;
    return this;
  }

  async close(): Promise<void> {
    for (const client of this.clients) client.end();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private accept(client: Connection): void {
    this.clients.add(client);
    client.on("close", () => this.clients.delete(client));
    client.on("error", () => undefined);
    client.on("authentication", (ctx) => this.authenticate(ctx));
    client.on("ready", () => {
      let channels = 0;
      client.on("session", (accept, reject) => {
        const channel = channels++;
        const hooks = this.options.channels;
        if (hooks?.open?.(channel) === false) return reject();
        const session = accept();
        session.on("sftp", (acceptSftp) => {
          const serve = (): void => serveSftp(acceptSftp(), this.options.root, hooks?.read && ((offset, length) => hooks.read?.(channel, offset, length)));
          if (hooks?.accept) void hooks.accept(channel).then(serve);
          else serve();
        });
      });
    });
  }

  private authenticate(ctx: AuthContext): void {
    const same = (a: string, b: string): boolean => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
    if (ctx.method === "password") {
      this.loginAttempts++;
      if (ctx.username === this.options.username && same(ctx.password, this.options.password)) return ctx.accept();
    } else if (ctx.method === "publickey" && this.options.publicKey) {
      const allowed = utils.parseKey(this.options.publicKey);
      if (allowed instanceof Error || ctx.username !== this.options.username) return ctx.reject();
      if (ctx.key.algo !== allowed.type || !ctx.key.data.equals(allowed.getPublicSSH())) return ctx.reject();
      // Without a signature the client only asks whether this key would do.
      if (!ctx.signature || !ctx.blob) return ctx.accept();
      this.loginAttempts++;
      if (allowed.verify(ctx.blob, ctx.signature, ctx.hashAlgo) === true) return ctx.accept();
    }
    ctx.reject(["password", "publickey"]);
  }
}

/** Like OpenSSH: a status and a short text, never the server's own file paths. */
function fail(sftp: SFTPWrapper, reqid: number, err: NodeJS.ErrnoException): void {
  const status = statusOf(err);
  const text = status === STATUS_CODE.NO_SUCH_FILE ? "No such file" : status === STATUS_CODE.PERMISSION_DENIED ? "Permission denied" : "Failure";
  sftp.status(reqid, status, text);
}

function statusOf(err: NodeJS.ErrnoException): number {
  if (err.code === "ENOENT" || err.code === "ENOTDIR") return STATUS_CODE.NO_SUCH_FILE;
  if (err.code === "EACCES" || err.code === "EPERM") return STATUS_CODE.PERMISSION_DENIED;
  return STATUS_CODE.FAILURE;
}

function attrsOf(st: fs.Stats): Attributes {
  return { mode: st.mode, uid: st.uid, gid: st.gid, size: st.size, atime: Math.floor(st.atimeMs / 1000), mtime: Math.floor(st.mtimeMs / 1000) };
}

function longname(name: string, st: fs.Stats): string {
  const type = st.isDirectory() ? "d" : st.isSymbolicLink() ? "l" : "-";
  const bits = "rwxrwxrwx".split("").map((c, i) => (st.mode & (1 << (8 - i)) ? c : "-")).join("");
  const date = st.mtime.toUTCString().slice(5, 22);
  return `${type}${bits} 1 owner group ${st.size} ${date} ${name}`;
}

/** The SFTP v3 request handlers over a real folder; virtual `/` is `root`. `beforeRead` is awaited before a read is answered. */
export function serveSftp(sftp: SFTPWrapper, root: string, beforeRead?: (offset: number, length: number) => Promise<void> | undefined): void {
  const handles = new Map<number, Handle>();
  let nextHandle = 1;
  const local = (virtual: string): string => path.join(root, path.posix.normalize(`/${virtual}`));
  const newHandle = (h: Handle): Buffer => {
    const id = nextHandle++;
    handles.set(id, h);
    const buf = Buffer.alloc(4);
    buf.writeUInt32BE(id);
    return buf;
  };
  const handleOf = (buf: Buffer): [number, Handle | undefined] => {
    const id = buf.length === 4 ? buf.readUInt32BE(0) : -1;
    return [id, handles.get(id)];
  };
  const done = (reqid: number) => (err: NodeJS.ErrnoException | null) =>
    err ? fail(sftp, reqid, err) : sftp.status(reqid, STATUS_CODE.OK);

  sftp.on("OPEN", (reqid, filename, flags) => {
    const mode = utils.sftp.flagsToString(flags);
    if (mode === null) return sftp.status(reqid, STATUS_CODE.OP_UNSUPPORTED);
    fs.open(local(filename), mode, 0o644, (err, fd) => (err ? fail(sftp, reqid, err) : sftp.handle(reqid, newHandle({ kind: "file", fd }))));
  });
  sftp.on("READ", (reqid, handle, offset, length) => {
    const [, h] = handleOf(handle);
    if (h?.kind !== "file") return sftp.status(reqid, STATUS_CODE.FAILURE, "bad handle");
    const buf = Buffer.alloc(length);
    const answer = (): void =>
      fs.read(h.fd, buf, 0, length, offset, (err, n) => {
        if (err) return fail(sftp, reqid, err);
        if (n === 0) return sftp.status(reqid, STATUS_CODE.EOF);
        sftp.data(reqid, buf.subarray(0, n));
      });
    const waiting = beforeRead?.(offset, length);
    if (waiting) void waiting.then(answer);
    else answer();
  });
  sftp.on("WRITE", (reqid, handle, offset, data) => {
    const [, h] = handleOf(handle);
    if (h?.kind !== "file") return sftp.status(reqid, STATUS_CODE.FAILURE, "bad handle");
    fs.write(h.fd, data, 0, data.length, offset, (err) => done(reqid)(err));
  });
  sftp.on("FSTAT", (reqid, handle) => {
    const [, h] = handleOf(handle);
    if (h?.kind !== "file") return sftp.status(reqid, STATUS_CODE.FAILURE, "bad handle");
    fs.fstat(h.fd, (err, st) => (err ? fail(sftp, reqid, err) : sftp.attrs(reqid, attrsOf(st))));
  });
  sftp.on("FSETSTAT", (reqid) => sftp.status(reqid, STATUS_CODE.OK));
  sftp.on("SETSTAT", (reqid) => sftp.status(reqid, STATUS_CODE.OK));
  sftp.on("CLOSE", (reqid, handle) => {
    const [id, h] = handleOf(handle);
    if (!h) return sftp.status(reqid, STATUS_CODE.FAILURE, "bad handle");
    handles.delete(id);
    if (h.kind === "file") fs.close(h.fd, (err) => done(reqid)(err));
    else sftp.status(reqid, STATUS_CODE.OK);
  });
  const stat = (reqid: number, p: string, fn: typeof fs.stat | typeof fs.lstat): void =>
    fn(local(p), (err, st) => (err ? fail(sftp, reqid, err) : sftp.attrs(reqid, attrsOf(st))));
  sftp.on("STAT", (reqid, p) => stat(reqid, p, fs.stat));
  sftp.on("LSTAT", (reqid, p) => stat(reqid, p, fs.lstat));
  sftp.on("OPENDIR", (reqid, p) => {
    fs.stat(local(p), (err, st) => {
      if (err) return fail(sftp, reqid, err);
      if (!st.isDirectory()) return sftp.status(reqid, STATUS_CODE.FAILURE, "not a directory");
      sftp.handle(reqid, newHandle({ kind: "dir", dir: local(p), sent: false }));
    });
  });
  sftp.on("READDIR", (reqid, handle) => {
    const [, h] = handleOf(handle);
    if (h?.kind !== "dir") return sftp.status(reqid, STATUS_CODE.FAILURE, "bad handle");
    if (h.sent) return sftp.status(reqid, STATUS_CODE.EOF);
    h.sent = true;
    fs.readdir(h.dir, (err, names) => {
      if (err) return fail(sftp, reqid, err);
      const entries: FileEntry[] = [];
      for (const name of names) {
        try {
          const st = fs.lstatSync(path.join(h.dir, name));
          entries.push({ filename: name, longname: longname(name, st), attrs: attrsOf(st) as FileEntry["attrs"] });
        } catch {
          // Removed between readdir and stat: not part of the listing.
        }
      }
      if (entries.length === 0) return sftp.status(reqid, STATUS_CODE.EOF);
      sftp.name(reqid, entries);
    });
  });
  sftp.on("REALPATH", (reqid, p) => {
    const virtual = path.posix.normalize(`/${p}`);
    sftp.name(reqid, [{ filename: virtual, longname: virtual, attrs: {} as FileEntry["attrs"] }]);
  });
  sftp.on("REMOVE", (reqid, p) => fs.unlink(local(p), done(reqid)));
  sftp.on("RMDIR", (reqid, p) => fs.rmdir(local(p), done(reqid)));
  sftp.on("MKDIR", (reqid, p) => fs.mkdir(local(p), done(reqid)));
  sftp.on("RENAME", (reqid, from, to) => {
    // SFTP v3 (and OpenSSH) refuse to replace an existing target.
    if (fs.existsSync(local(to))) return sftp.status(reqid, STATUS_CODE.FAILURE, "target exists");
    fs.rename(local(from), local(to), done(reqid));
  });
}
