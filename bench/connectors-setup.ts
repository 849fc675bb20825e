/**
 * The servers, the latency proxy and the reference clients `bench:connectors`
 * measures against: Debian's own servers (openssh-server, vsftpd, installed
 * by scripts/test-servers.sh) on loopback high ports. The Node test doubles
 * are no option: OpenSSH's `sftp` hangs on ssh2's test server's answers, and
 * they disagree with the real servers anyway (pitfalls.md, Transfers).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { ConnectionConfig } from "../connectors/types.js";
import { OpenSshServer, SFTP_BIN } from "../test/connectors/openssh-server.js";
import { VsftpdServer } from "../test/connectors/vsftpd-server.js";

const here = path.dirname(fileURLToPath(import.meta.url));
export const CURL_BIN = "/usr/bin/curl";

export interface BenchServers {
  sftpPort: number;
  ftpPort: number;
  /** Our connections; each scenario sets the port (the server's or the relay's). */
  sftp: ConnectionConfig;
  ftp: ConnectionConfig;
  /** The file's path as each server names it, for the reference clients. */
  sftpRemote: string;
  ftpUrl(port: number): string;
  sftpArgs(port: number): string[];
  stop(): Promise<void>;
}

/** What is missing to run against Debian's servers, or [] when all is there. */
export function missingTools(): string[] {
  const tools = [SFTP_BIN, CURL_BIN];
  if (!OpenSshServer.available()) tools.push("/usr/sbin/sshd");
  if (!VsftpdServer.available()) tools.push("/usr/sbin/vsftpd");
  return tools.filter((t) => !existsSync(t));
}

/** A child process that prints one JSON line when ready and stops when its stdin closes. */
async function startChild<T>(args: string[]): Promise<{ value: T; child: ChildProcess }> {
  const child = spawn(process.execPath, [...process.execArgv, ...args], { stdio: ["pipe", "pipe", "inherit"] });
  const line = await new Promise<string>((resolve, reject) => {
    if (child.stdout === null) return reject(new Error("child has no stdout"));
    createInterface({ input: child.stdout }).once("line", resolve);
    child.once("exit", (code) => reject(new Error(`${args[0] ?? "child"} exited with ${code}`)));
  });
  return { value: JSON.parse(line) as T, child };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.stdin?.end();
  await exited;
}

/** The delaying relay in a process of its own, so its work does not run on a measured event loop. */
export async function startLatencyProxy(targetPort: number, delayMs: number): Promise<{ port: number; stop(): Promise<void> }> {
  const { value, child } = await startChild<{ port: number }>([path.join(here, "latency-proxy.ts"), String(targetPort), String(delayMs)]);
  return { port: value.port, stop: () => stopChild(child) };
}

export async function startDebianServers(root: string, file: string): Promise<BenchServers> {
  const sshd = await new OpenSshServer().start();
  const vsftpd = await new VsftpdServer(root).start();
  return {
    sftpPort: sshd.port,
    ftpPort: vsftpd.port,
    sftp: { type: "sftp", address: "127.0.0.1", username: sshd.username, password: sshd.privateKey, is_key_file: true, path: root },
    ftp: { type: "ftp", address: "127.0.0.1", username: "anonymous", password: "", path: "/" },
    sftpRemote: path.join(root, file),
    ftpUrl: (port) => `ftp://127.0.0.1:${port}/${file}`,
    sftpArgs: (port) => sshd.sftpArgs(port),
    async stop() {
      await vsftpd.close();
      await sshd.close();
    },
  };
}

/** Wall seconds of a reference client's whole run: connect, log in, transfer, as a user waits for it. */
async function timed(command: string, args: string[], input?: string): Promise<number> {
  const started = process.hrtime.bigint();
  await new Promise<void>((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["pipe", "ignore", "pipe"] });
    let errors = "";
    child.stderr.on("data", (d: Buffer) => (errors += d.toString()));
    child.once("error", reject);
    child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${path.basename(command)} exited with ${code}: ${errors.trim()}`))));
    child.stdin.end(input ?? "");
  });
  return Number(process.hrtime.bigint() - started) / 1e9;
}

/** OpenSSH's `sftp` in batch mode (`-b -`, the batch read from stdin), its defaults otherwise. */
export async function referenceSftp(servers: BenchServers, port: number, local: string): Promise<number> {
  await rm(local, { force: true });
  return timed(SFTP_BIN, [...servers.sftpArgs(port), "-b", "-", `${servers.sftp.username ?? "root"}@127.0.0.1`], `get ${servers.sftpRemote} ${local}\n`);
}

export async function referenceCurl(servers: BenchServers, port: number, local: string): Promise<number> {
  await rm(local, { force: true });
  return timed(CURL_BIN, ["-sS", "-o", local, servers.ftpUrl(port)]);
}
