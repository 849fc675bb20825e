/**
 * `npm run bench:connectors`: downloads one file (BENCH_SIZE_MB, default 500)
 * through our connectors and through the client a user would compare us
 * with, against Debian's own servers on loopback, and prints MB/s and the
 * ratio for each scenario:
 *
 *   SFTP loopback   OpenSSH's `sftp` against sshd            target ≥ 1.0
 *   SFTP 40 ms      the same through a 20 ms-each-way relay  target ≥ 2.0
 *   FTP loopback    curl against vsftpd                      target ≥ 0.9
 *
 * Each scenario alternates the two clients (order flipped every round) and
 * keeps the best of BENCH_ROUNDS (3) each, so a noisy neighbour hurts both.
 * Our side runs in a child process whose peak RSS must stay under 200 MB.
 * Exits 1 when a target is missed, 2 when the servers are not installed.
 *
 * Options: `--only sftp,sftp-40ms,ftp`. BENCH_SFTP_TUNING='{"channels":1,…}' tries
 * other download settings (connectors/sftp.ts, SftpTuning); BENCH_CPU_PROF=<folder>
 * writes a `--cpu-prof` profile of each of our runs there.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { chmod, mkdir, rm, stat } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { randomFile, removeDir, sha256File, tempDir } from "../test/connectors/conformance-kit.js";
import type { RunJob, RunResult } from "./connectors-run.js";
import { missingTools, referenceCurl, referenceSftp, startDebianServers, startLatencyProxy, type BenchServers } from "./connectors-setup.js";

const SIZE_MB = Number(process.env.BENCH_SIZE_MB ?? 500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const RSS_LIMIT_MB = 200;
const FILE = "big.bin";
const here = path.dirname(fileURLToPath(import.meta.url));

interface Scenario {
  name: string;
  reference: string;
  target: number;
  port: number;
  ours: (local: string) => RunJob;
  theirs: (local: string) => Promise<number>;
}

interface Outcome {
  scenario: Scenario;
  oursMbs: number;
  theirsMbs: number;
  /** Least CPU seconds per 100 MB each side spent (client processes only). */
  oursCpu: number;
  theirsCpu: number;
  peakRssMb: number;
  failures: string[];
}

/**
 * CPU seconds of this process's finished children (cutime + cstime in
 * /proc/self/stat; `sftp` waits for its `ssh`, so both count). On a busy
 * machine wall time swings with the neighbours; CPU per MB barely does.
 */
function childCpuSeconds(): number {
  try {
    const fields = readFileSync("/proc/self/stat", "utf8").replace(/^.*\) /s, "").split(" ");
    // After the command name: state is field 3, cutime field 16 and cstime 17 (proc(5)), at 100 ticks a second.
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return Number.NaN;
  }
}

async function runOurs(job: RunJob): Promise<RunResult> {
  // BENCH_CPU_PROF=<folder>: a --cpu-prof profile of each of our runs, to explain a miss.
  const profile = process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${path.resolve(process.env.BENCH_CPU_PROF)}`] : [];
  const child = spawn(process.execPath, [...process.execArgv, ...profile, path.join(here, "connectors-run.ts"), JSON.stringify(job)], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  if (code !== 0) throw new Error(`our ${job.connection.type} download exited with ${code}`);
  return JSON.parse(out.trim().split("\n").pop() ?? "{}") as RunResult;
}

async function measure(scenario: Scenario, local: string, expectedHash: string, bytes: number): Promise<Outcome> {
  const mb = bytes / 1048576;
  const outcome: Outcome = { scenario, oursMbs: 0, theirsMbs: 0, oursCpu: Infinity, theirsCpu: Infinity, peakRssMb: 0, failures: [] };
  for (let round = 0; round < ROUNDS; round++) {
    // Flipping the order keeps a warming page cache or a neighbour's burst from always favouring one side.
    const sides = round % 2 === 0 ? (["theirs", "ours"] as const) : (["ours", "theirs"] as const);
    for (const side of sides) {
      await rm(local, { force: true });
      const cpuBefore = childCpuSeconds();
      if (side === "theirs") {
        const seconds = await scenario.theirs(local);
        const cpu = ((childCpuSeconds() - cpuBefore) * 100) / mb;
        const size = (await stat(local)).size;
        if (size !== bytes) outcome.failures.push(`${scenario.reference} wrote ${size} bytes, ${bytes} expected`);
        outcome.theirsMbs = Math.max(outcome.theirsMbs, mb / seconds);
        outcome.theirsCpu = Math.min(outcome.theirsCpu, cpu);
        console.log(`  ${scenario.reference.padEnd(14)} ${(mb / seconds).toFixed(1).padStart(7)} MB/s, ${cpu.toFixed(2)} CPU s per 100 MB`);
      } else {
        const result = await runOurs(scenario.ours(local));
        const cpu = (result.cpuSeconds * 100) / mb;
        const ok = (await sha256File(local)) === expectedHash;
        if (!ok) outcome.failures.push(`our download's sha256 differs from the source's`);
        outcome.oursMbs = Math.max(outcome.oursMbs, mb / result.seconds);
        outcome.oursCpu = Math.min(outcome.oursCpu, cpu);
        outcome.peakRssMb = Math.max(outcome.peakRssMb, result.maxRssMb);
        const note = ok ? "" : ", HASH MISMATCH";
        console.log(`  ${"conveyor".padEnd(14)} ${(mb / result.seconds).toFixed(1).padStart(7)} MB/s, ${cpu.toFixed(2)} CPU s per 100 MB, peak RSS ${result.maxRssMb.toFixed(0)} MB${note}`);
      }
    }
  }
  await rm(local, { force: true });
  return outcome;
}

function scenarios(servers: BenchServers, proxyPort: number): Scenario[] {
  const tuning = process.env.BENCH_SFTP_TUNING ? (JSON.parse(process.env.BENCH_SFTP_TUNING) as RunJob["sftpTuning"]) : undefined;
  const size = SIZE_MB * 1024 * 1024;
  const sftpJob = (port: number) => (local: string): RunJob => ({ connection: { ...servers.sftp, port }, file: FILE, size, local, sftpTuning: tuning });
  return [
    { name: "sftp", reference: "OpenSSH sftp", target: 1.0, port: servers.sftpPort, ours: sftpJob(servers.sftpPort), theirs: (l) => referenceSftp(servers, servers.sftpPort, l) },
    { name: "sftp-40ms", reference: "OpenSSH sftp", target: 2.0, port: proxyPort, ours: sftpJob(proxyPort), theirs: (l) => referenceSftp(servers, proxyPort, l) },
    {
      name: "ftp",
      reference: "curl",
      target: 0.9,
      port: servers.ftpPort,
      ours: (local) => ({ connection: { ...servers.ftp, port: servers.ftpPort }, file: FILE, size, local }),
      theirs: (l) => referenceCurl(servers, servers.ftpPort, l),
    },
  ];
}

function report(outcomes: Outcome[], header: string): boolean {
  console.log(`\n${header}`);
  console.log("scenario    reference     theirs MB/s  ours MB/s  ratio  target  peak RSS        CPU s/100 MB theirs, ours");
  let ok = true;
  for (const o of outcomes) {
    const ratio = o.oursMbs / o.theirsMbs;
    const rssOk = o.peakRssMb < RSS_LIMIT_MB;
    const pass = ratio >= o.scenario.target && rssOk && o.failures.length === 0;
    ok &&= pass;
    console.log(
      `${o.scenario.name.padEnd(11)} ${o.scenario.reference.padEnd(13)} ${o.theirsMbs.toFixed(1).padStart(11)} ${o.oursMbs.toFixed(1).padStart(10)} ${ratio.toFixed(2).padStart(6)}  ≥ ${o.scenario.target.toFixed(1)}  ${o.peakRssMb.toFixed(0).padStart(4)} MB (< ${RSS_LIMIT_MB})  ${o.theirsCpu.toFixed(2)}, ${o.oursCpu.toFixed(2)}  ${pass ? "ok" : "MISS"}`,
    );
    for (const f of o.failures) console.log(`  ${f}`);
  }
  return ok;
}

async function main(): Promise<void> {
  const onlyAt = process.argv.indexOf("--only");
  const only = onlyAt >= 0 ? (process.argv[onlyAt + 1] ?? "").split(",") : undefined;
  const missing = missingTools();
  if (missing.length > 0) {
    console.error(`bench:connectors needs ${missing.join(", ")}: run scripts/test-servers.sh (as root) first`);
    process.exit(2);
  }
  const root = await tempDir("bench-connectors");
  // vsftpd serves as its unprivileged `ftp` user: the folder and file must be world-readable.
  await chmod(root, 0o755);
  let servers: BenchServers | undefined;
  let proxy: Awaited<ReturnType<typeof startLatencyProxy>> | undefined;
  try {
    const hash = await randomFile(path.join(root, FILE), SIZE_MB * 1024 * 1024);
    await chmod(path.join(root, FILE), 0o644);
    await mkdir(path.join(root, "out"));
    servers = await startDebianServers(root, FILE);
    proxy = await startLatencyProxy(servers.sftpPort, 20);
    const header = `node ${process.version}, ${SIZE_MB} MB file, Debian's openssh-server and vsftpd, best of ${ROUNDS}`;
    console.log(header);
    const outcomes: Outcome[] = [];
    for (const scenario of scenarios(servers, proxy.port)) {
      if (only && !only.includes(scenario.name)) continue;
      console.log(`${scenario.name}:`);
      outcomes.push(await measure(scenario, path.join(root, "out", FILE), hash, SIZE_MB * 1024 * 1024));
    }
    process.exitCode = report(outcomes, header) ? 0 : 1;
  } finally {
    await proxy?.stop();
    await servers?.stop();
    await removeDir(root);
  }
}

await main();
