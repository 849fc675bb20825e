import { hostname } from "node:os";

/**
 * Who holds an automation's no-overlap lock: `cli <host>:<pid>` or
 * `daemon <host>:<pid>`. The host and process let a holder on this machine
 * that was killed be told apart from a slow one at once, without waiting for
 * its lease to run out.
 */
export function lockHolder(kind: "cli" | "daemon"): string {
  return `${kind} ${hostname()}:${process.pid}`;
}

/** False only when the holder is a process of this machine that no longer exists; anything else may be alive. */
export function holderMayBeAlive(holder: string): boolean {
  const match = /^(?:cli|daemon) (.+):(\d+)$/.exec(holder);
  if (!match || match[1] !== hostname()) return true;
  const pid = Number(match[2]);
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

/** The holder in words for a message: which program on which machine runs the automation. */
export function describeHolder(holder: string): string {
  const match = /^(cli|daemon) (.+):(\d+)$/.exec(holder);
  if (!match) return `daemon ${holder}`;
  return `${match[1] === "cli" ? "conveyor run" : "the daemon"} on ${match[2]} (pid ${match[3]})`;
}
