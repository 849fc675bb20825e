import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort, stopServer, waitForGreeting } from "../helpers/ports.js";

export const VSFTPD_BIN = "/usr/sbin/vsftpd";
/** The empty folder vsftpd chroots its unprivileged helper into; Debian's package ships it. */
const SECURE_CHROOT = "/var/run/vsftpd/empty";

/**
 * A private vsftpd (Debian's package, installed by scripts/test-servers.sh) on
 * a free loopback port, serving `root` read-only to anonymous logins: no
 * system user or password is created. As root, vsftpd drops to the package's
 * `ftp` user, so the served files must be world-readable.
 */
export class VsftpdServer {
  private child: ChildProcess | undefined;
  private output = "";
  private dir = "";
  port = 0;

  constructor(readonly root: string) {}

  static available(): boolean {
    return existsSync(VSFTPD_BIN);
  }

  async start(): Promise<this> {
    this.dir = mkdtempSync(path.join(tmpdir(), "conveyor-vsftpd-"));
    this.port = await freePort();
    const pasv = await freePort();
    mkdirSync(SECURE_CHROOT, { recursive: true, mode: 0o755 });
    // vsftpd refuses an anonymous root the anonymous user could write to.
    chmodSync(this.root, 0o755);
    const config = [
      "listen=YES",
      "listen_ipv6=NO",
      "listen_address=127.0.0.1",
      `listen_port=${this.port}`,
      "background=NO",
      "anonymous_enable=YES",
      `anon_root=${this.root}`,
      "no_anon_password=YES",
      "local_enable=NO",
      "write_enable=NO",
      "pasv_enable=YES",
      "pasv_address=127.0.0.1",
      // One transfer at a time, so a small range starting at a free port is enough.
      `pasv_min_port=${pasv}`,
      `pasv_max_port=${Math.min(65535, pasv + 20)}`,
      // Its seccomp filter kills the session in some container kernels.
      "seccomp_sandbox=NO",
      "xferlog_enable=NO",
      `secure_chroot_dir=${SECURE_CHROOT}`,
    ];
    const file = path.join(this.dir, "vsftpd.conf");
    writeFileSync(file, `${config.join("\n")}\n`);
    const child = spawn(VSFTPD_BIN, [file], { stdio: ["ignore", "pipe", "pipe"] });
    this.child = child;
    child.stdout.on("data", (d: Buffer) => (this.output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (this.output += d.toString()));
    await waitForGreeting(this.port, "220", "vsftpd", Date.now() + 10_000, () => this.output);
    return this;
  }

  async close(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    await stopServer(child, this.dir);
  }
}
