import { createServer } from "node:net";
import type { HostPort } from "./config.js";
import { ConveyorError } from "./errors.js";

/** An address a command is about to listen on, and the setting a person changes to move it. */
export interface ListenTarget {
  address: HostPort;
  /** What listens there, as the message says it: "the daemon API". */
  what: string;
  /** The setting that moves it: "CONVEYOR_LISTEN / --listen". */
  setting: string;
}

export function formatAddress({ host, port }: HostPort): string {
  return `${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/**
 * The error a failed listen turns into: the address, why, and the setting to
 * change. Node's bare `listen EADDRINUSE` names neither what wanted the port
 * nor how to move it.
 */
export function listenFailure(target: ListenTarget, err: unknown): ConveyorError {
  const code = (err as NodeJS.ErrnoException).code;
  const where = formatAddress(target.address);
  const reason =
    code === "EADDRINUSE"
      ? "the port is in use by another process"
      : code === "EACCES"
        ? "this user may not listen on that port (below 1024 needs privileges)"
        : code === "EADDRNOTAVAIL"
          ? "the host is not an address of this machine"
          : (err as Error).message;
  return new ConveyorError("settings_invalid", `${target.what} cannot listen on ${where}: ${reason}`, {
    cause: err,
    details: { address: where, errno: code },
    hint: `Stop what holds it, or set ${target.setting} to a free address (port 0 takes any free port).`,
  });
}

function probe(target: ListenTarget): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", (err) => reject(listenFailure(target, err)));
    server.listen({ host: target.address.host, port: target.address.port, exclusive: true }, () => server.close(() => resolve()));
  });
}

/**
 * Checks that each fixed address is free before a command writes anything, so
 * a port in use leaves no data folder or half-made state behind. A port taken
 * between this check and the real listen still fails there, with the same message.
 */
export async function checkListenAddresses(targets: readonly ListenTarget[]): Promise<void> {
  const fixed = targets.filter((t) => t.address.port !== 0);
  for (const [i, target] of fixed.entries()) {
    const clash = fixed.slice(0, i).find((other) => other.address.port === target.address.port);
    if (clash) {
      throw new ConveyorError("settings_invalid", `${target.what} and ${clash.what} are both set to port ${target.address.port}`, {
        hint: `Give ${target.setting} a port of its own.`,
      });
    }
    await probe(target);
  }
}
