import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import path from "node:path";
import { freePort, stopServer, waitForGreeting } from "../helpers/ports.js";

export const SSHD_BIN = "/usr/sbin/sshd";
export const SFTP_BIN = "/usr/bin/sftp";
/** Debian's sftp-server: what a stock `Subsystem sftp` line runs, with its 255 KiB read limit. */
const SFTP_SERVER = "/usr/lib/openssh/sftp-server";

/**
 * A private OpenSSH server (Debian's openssh-server, installed by
 * scripts/test-servers.sh) on a free loopback port: a throwaway host key and
 * client key pair, its own config in a temp folder, no PAM. It logs in the
 * user running it (root in CI) by key only, so no system password is touched.
 */
export class OpenSshServer {
  private child: ChildProcess | undefined;
  private output = "";
  dir = "";
  port = 0;
  readonly username = userInfo().username;
  /** The client's private key (OpenSSH format), for `is_key_file` connections. */
  privateKey = "";
  keyPath = "";

  /** `extraConfig`: more sshd_config lines, e.g. `RekeyLimit 1M` to make the server rekey as it sends. */
  constructor(private readonly extraConfig: string[] = []) {}

  static available(): boolean {
    return existsSync(SSHD_BIN) && existsSync(SFTP_SERVER);
  }

  async start(): Promise<this> {
    this.dir = mkdtempSync(path.join(tmpdir(), "conveyor-sshd-"));
    this.port = await freePort();
    const file = (name: string): string => path.join(this.dir, name);
    for (const key of ["host_ed25519", "client_ed25519"]) {
      execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "conveyor-test", "-f", file(key)]);
    }
    writeFileSync(file("authorized_keys"), readFileSync(file("client_ed25519.pub")));
    chmodSync(file("authorized_keys"), 0o600);
    this.keyPath = file("client_ed25519");
    this.privateKey = readFileSync(this.keyPath, "utf8");
    // sshd refuses to start as root without its privilege separation folder, which only the packaged service creates.
    if (userInfo().uid === 0) mkdirSync("/run/sshd", { recursive: true, mode: 0o755 });
    const config = [
      `Port ${this.port}`,
      "ListenAddress 127.0.0.1",
      `HostKey ${file("host_ed25519")}`,
      `PidFile ${file("sshd.pid")}`,
      `AuthorizedKeysFile ${file("authorized_keys")}`,
      "UsePAM no",
      "PasswordAuthentication no",
      "KbdInteractiveAuthentication no",
      "PubkeyAuthentication yes",
      "PermitRootLogin prohibit-password",
      // The temp folder's modes are the test's business, not a login risk.
      "StrictModes no",
      `Subsystem sftp ${SFTP_SERVER}`,
      "LogLevel ERROR",
      ...this.extraConfig,
    ];
    writeFileSync(file("sshd_config"), `${config.join("\n")}\n`);
    // sshd re-executes itself and demands an absolute path; -D stays in the foreground, -e logs to stderr.
    const child = spawn(SSHD_BIN, ["-D", "-e", "-f", file("sshd_config")], { stdio: ["ignore", "pipe", "pipe"] });
    this.child = child;
    child.stdout.on("data", (d: Buffer) => (this.output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (this.output += d.toString()));
    await waitForGreeting(this.port, "SSH-", "sshd", Date.now() + 10_000, () => this.output);
    return this;
  }

  /** The host key's fingerprint as `ssh-keygen -l` prints it (`SHA256:…`). */
  fingerprint(): string {
    const line = execFileSync("ssh-keygen", ["-l", "-E", "sha256", "-f", path.join(this.dir, "host_ed25519.pub")]).toString();
    return line.split(" ")[1] ?? "";
  }

  /** `sftp` batch-mode arguments that reach this server with the throwaway key and no known_hosts. */
  sftpArgs(port = this.port): string[] {
    return ["-q", "-i", this.keyPath, "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR", "-P", String(port)];
  }

  async close(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    await stopServer(child, this.dir);
  }
}
