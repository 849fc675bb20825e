/**
 * One download through our connector, in a process of its own so its peak
 * RSS is the connector's (plus Node and tsx) and nothing else's. Started by
 * bench/connectors.ts with a JSON job as its argument; prints one JSON line.
 *
 * The timer covers what a user waits for, as the reference client's does:
 * connecting, logging in and the transfer (the connector opens its session on
 * the first call, here the download).
 */
import path from "node:path";
import { createFtpConnector } from "../connectors/ftp.js";
import { SftpConnector, type SftpTuning } from "../connectors/sftp.js";
import type { ConnectionConfig, Connector, ConnectorContext } from "../connectors/types.js";
import { loadSettings } from "../src/config.js";
import { silentLogger } from "../src/log.js";

export interface RunJob {
  connection: ConnectionConfig;
  /** Path of the file relative to connection.path, and its size as a listing would give it. */
  file: string;
  size: number;
  local: string;
  sftpTuning?: Partial<SftpTuning>;
}

export interface RunResult {
  seconds: number;
  /** CPU time (user + system) of the download alone, without Node's start-up. */
  cpuSeconds: number;
  bytes: number;
  maxRssMb: number;
}

function connectorFor(job: RunJob, context: ConnectorContext): Connector {
  if (job.connection.type === "sftp") return new SftpConnector(job.connection, context, undefined, job.sftpTuning);
  return createFtpConnector(job.connection, context);
}

async function main(): Promise<void> {
  const job = JSON.parse(process.argv[2] ?? "{}") as RunJob;
  const context: ConnectorContext = {
    // The bench servers listen on loopback, which the network guard refuses by default.
    settings: { ...loadSettings({ env: {}, cwd: path.dirname(job.local) }), allowPrivateHosts: true },
    logger: silentLogger,
    metadata: { get: () => undefined, set: async () => undefined },
    apiUser: "bench",
  };
  const connector = connectorFor(job, context);
  const file = { name: path.posix.basename(job.file), path: job.file, size: job.size, modified: null };
  const started = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  const { size } = await connector.download(file, job.local);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const used = process.cpuUsage(cpu);
  await connector.close();
  const result: RunResult = { seconds, cpuSeconds: (used.user + used.system) / 1e6, bytes: size, maxRssMb: process.resourceUsage().maxRSS / 1024 };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

await main();
