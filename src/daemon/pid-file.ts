import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ConveyorError } from "../errors.js";

/** The file in the data folder that names the process of the daemon running on it. */
export function pidFilePath(dataDir: string): string {
  return path.join(dataDir, "daemon.pid");
}

function readPid(file: string): number | undefined {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  const pid = Number(text.trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/**
 * Whether `pid` is a live Conveyor daemon. A pid left by a killed daemon may
 * since have been given to an unrelated process (after a reboot, say), so on
 * Linux its command line must also name the daemon command.
 */
export function isDaemonProcess(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: alive, but another user's; it still holds the folder.
    if ((err as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  let cmdline: string;
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    // No /proc (macOS) or no right to read it: the signal test is all there is.
    return true;
  }
  return cmdline.split("\0").includes("daemon");
}

export interface PidFile {
  file: string;
  /** Removes the file if it still names this process; safe to call twice. */
  release(): void;
}

/**
 * Writes this process's pid into the data folder. A file naming a live daemon
 * refuses the start (two daemons on one data folder would share its SQLite
 * files and work folders); one left by a killed daemon is replaced.
 */
export function claimPidFile(dataDir: string, pid: number = process.pid): PidFile {
  const file = pidFilePath(dataDir);
  const holder = readPid(file);
  if (holder !== undefined && holder !== pid && isDaemonProcess(holder)) {
    throw new ConveyorError("settings_invalid", `a daemon (pid ${holder}) already runs on the data folder ${dataDir}`, {
      hint: "Stop it first, or give this daemon a data folder of its own (CONVEYOR_DATA_DIR / --data-dir) and its own CONVEYOR_LISTEN and CONVEYOR_SERVICE_LISTEN.",
    });
  }
  mkdirSync(dataDir, { recursive: true });
  rmSync(file, { force: true });
  try {
    // `wx`: of two daemons replacing the same stale file at once, one wins and the other is refused.
    writeFileSync(file, `${pid}\n`, { flag: "wx" });
  } catch (err) {
    throw new ConveyorError("settings_invalid", `another daemon started on the data folder ${dataDir} at the same moment (${(err as Error).message})`, {
      cause: err,
      hint: "Run one daemon per data folder (CONVEYOR_DATA_DIR / --data-dir).",
    });
  }
  return {
    file,
    release() {
      if (readPid(file) === pid) rmSync(file, { force: true });
    },
  };
}

/** The pid of the daemon running on `dataDir`, for `conveyor reload`; refuses a missing or stale file. */
export function runningDaemonPid(dataDir: string): number {
  const file = pidFilePath(dataDir);
  const pid = readPid(file);
  if (pid === undefined) {
    throw new ConveyorError("state", `no daemon runs on the data folder ${dataDir}: ${file} is missing or holds no pid`, {
      hint: "Start it with `conveyor daemon`, or give the daemon's data folder (CONVEYOR_DATA_DIR / --data-dir).",
    });
  }
  if (!isDaemonProcess(pid)) {
    throw new ConveyorError("state", `no daemon runs on the data folder ${dataDir}: ${file} names pid ${pid}, which is not running (a killed daemon left the file)`, {
      hint: "Start the daemon again; it replaces the stale file.",
    });
  }
  return pid;
}
