import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer, type AddressInfo } from "node:net";
import { tmpdir, userInfo } from "node:os";
import path from "node:path";

export const DOVECOT_BIN = "/usr/sbin/dovecot";

export interface DovecotUser {
  username: string;
  password: string;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function idOf(user: string): { uid: number; gid: number } {
  const uid = Number(execFileSync("id", ["-u", user]).toString().trim());
  const gid = Number(execFileSync("id", ["-g", user]).toString().trim());
  return { uid, gid };
}

async function waitForGreeting(port: number, deadline: number): Promise<void> {
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1");
      socket.once("data", (d) => {
        socket.destroy();
        resolve(d.toString().startsWith("* OK"));
      });
      socket.once("error", () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`dovecot did not answer on port ${port}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * A private Dovecot (Debian's dovecot-imapd, installed by scripts/test-servers.sh)
 * for the IMAP tests: its own config in a temp folder, plain IMAP on a free
 * loopback port, users from a passwd-file, mail in a temp maildir. As root
 * (CI) the mail processes run as the package's `dovecot` user, since Dovecot
 * refuses to touch mail as root; otherwise everything runs as the caller.
 */
export class DovecotServer {
  private child: ChildProcess | undefined;
  private dir = "";
  private output = "";
  port = 0;

  constructor(readonly users: DovecotUser[]) {}

  static available(): boolean {
    return existsSync(DOVECOT_BIN);
  }

  async start(): Promise<this> {
    this.dir = mkdtempSync(path.join(tmpdir(), "conveyor-dovecot-"));
    this.port = await freePort();
    const me = userInfo();
    const root = me.uid === 0;
    const mail = root ? idOf("dovecot") : { uid: me.uid, gid: me.gid };
    const internal = root ? "dovecot" : me.username;
    const login = root ? "dovenull" : me.username;
    // The auth and mail processes run as other users: they must reach into the folder.
    if (root) chmodSync(this.dir, 0o755);
    // Modes set outright: a daemon started earlier in this test process may have left a private umask (077).
    for (const sub of ["run", "state", "mail"]) {
      mkdirSync(path.join(this.dir, sub));
      chmodSync(path.join(this.dir, sub), 0o755);
    }
    if (root) chownSync(path.join(this.dir, "mail"), mail.uid, mail.gid);
    const passwd = this.users.map((u) => `${u.username}:{PLAIN}${u.password}:${mail.uid}:${mail.gid}::${path.join(this.dir, "mail", u.username)}`).join("\n");
    writeFileSync(path.join(this.dir, "users"), `${passwd}\n`);
    chmodSync(path.join(this.dir, "users"), 0o644);
    const conf = `
instance_name = conveyor-test-${process.pid}-${this.port}
base_dir = ${this.dir}/run
state_dir = ${this.dir}/state
log_path = ${this.dir}/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
# Tests of wrong passwords need no brute-force brake.
auth_failure_delay = 0
default_internal_user = ${internal}
default_login_user = ${login}
first_valid_uid = ${Math.min(mail.uid, 100)}
mail_uid = ${mail.uid}
mail_gid = ${mail.gid}
mail_location = maildir:~/Maildir
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u ${this.dir}/users
}
userdb {
  driver = passwd-file
  args = username_format=%u ${this.dir}/users
}
service imap-login {
  chroot =
  inet_listener imap {
    address = 127.0.0.1
    port = ${this.port}
  }
  inet_listener imaps {
    port = 0
  }
}
service anvil {
  chroot =
}
`;
    const confPath = path.join(this.dir, "dovecot.conf");
    writeFileSync(confPath, conf);
    chmodSync(confPath, 0o644);
    this.child = spawn(DOVECOT_BIN, ["-F", "-c", confPath], { stdio: ["ignore", "pipe", "pipe"] });
    this.child.stdout?.on("data", (d: Buffer) => (this.output += d.toString()));
    this.child.stderr?.on("data", (d: Buffer) => (this.output += d.toString()));
    const exited = new Promise<never>((_, reject) => this.child?.once("exit", (code) => reject(new Error(`dovecot exited with ${code}: ${this.output}${this.log()}`))));
    await Promise.race([waitForGreeting(this.port, Date.now() + 15_000), exited]);
    exited.catch(() => undefined);
    return this;
  }

  log(): string {
    try {
      return readFileSync(path.join(this.dir, "dovecot.log"), "utf8");
    } catch {
      return "";
    }
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (child && child.exitCode === null) {
      const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await gone;
      clearTimeout(timer);
    }
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
  }
}
