/**
 * `npm run bench:connectors`: downloads a 500 MB file over SFTP and FTP on
 * loopback through the real connectors and prints MB/s and peak memory. The
 * servers run in a child process so the memory figure is the connector's own.
 */
import { spawn } from "node:child_process";
import { rm, stat } from "node:fs/promises";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { silentLogger } from "../src/log.js";
import { loadSettings } from "../src/config.js";
import { createConnector } from "../connectors/index.js";
import type { ConnectionConfig, ConnectorContext } from "../connectors/types.js";
import { TestFtpServer } from "../test/helpers/ftp-server.js";
import { TestSftpServer } from "../test/helpers/sftp-server.js";
import { randomFile, removeDir, sha256File, tempDir } from "../test/connectors/conformance-kit.js";

const SIZE_MB = Number(process.env.BENCH_SIZE_MB ?? 500);
const USER = "bench";
const PASSWORD = "bench-password-123";

async function serve(root: string): Promise<void> {
  const sftp = await new TestSftpServer({ root, username: USER, password: PASSWORD }).start();
  const ftp = await new TestFtpServer({ root, username: USER, password: PASSWORD }).start();
  process.stdout.write(`${JSON.stringify({ sftp: sftp.port, ftp: ftp.port })}\n`);
  process.stdin.resume();
  process.stdin.on("end", () => process.exit(0));
}

async function measure(connection: ConnectionConfig, local: string, expectedHash: string): Promise<string> {
  const context: ConnectorContext = {
    // The bench servers listen on loopback, which the network guard refuses by default.
    settings: { ...loadSettings({ env: {}, cwd: path.dirname(local) }), allowPrivateHosts: true },
    logger: silentLogger,
    metadata: { get: () => undefined, set: async () => undefined },
    apiUser: "bench",
  };
  const connector = createConnector(connection, context);
  const [file] = (await connector.list()).filter((f) => f.name === "big.bin");
  if (!file) throw new Error("big.bin not listed");
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const started = process.hrtime.bigint();
  await connector.download(file, local);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  clearInterval(sampler);
  await connector.close();
  const ok = (await sha256File(local)) === expectedHash ? "hash ok" : "HASH MISMATCH";
  const size = (await stat(local)).size;
  await rm(local);
  const mb = size / 1024 / 1024;
  return `${connection.type.padEnd(5)} ${mb.toFixed(0)} MB in ${seconds.toFixed(2)} s = ${(mb / seconds).toFixed(1)} MB/s, peak RSS ${(peak / 1048576).toFixed(0)} MB (+${((peak - baseline) / 1048576).toFixed(0)} MB over idle), ${ok}`;
}

async function main(): Promise<void> {
  if (process.argv[2] === "serve") return serve(process.argv[3] ?? ".");
  const root = await tempDir("bench-connectors");
  try {
    const hash = await randomFile(path.join(root, "big.bin"), SIZE_MB * 1024 * 1024);
    const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), "serve", root], { stdio: ["pipe", "pipe", "inherit"] });
    const first = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).once("line", resolve);
      child.once("exit", (code) => reject(new Error(`server exited with ${code}`)));
    });
    const ports = JSON.parse(first) as { sftp: number; ftp: number };
    const base = { address: "127.0.0.1", username: USER, password: PASSWORD, path: "/" };
    const local = path.join(root, "out", "big.bin");
    console.log(`node ${process.version}, ${SIZE_MB} MB file, loopback, servers in a separate process`);
    console.log(await measure({ ...base, type: "sftp", port: ports.sftp }, local, hash));
    console.log(await measure({ ...base, type: "ftp", port: ports.ftp }, local, hash));
    child.stdin.end();
  } finally {
    await removeDir(root);
  }
}

await main();
