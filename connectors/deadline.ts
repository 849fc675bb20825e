import { ConveyorError } from "../src/errors.js";

/**
 * Runs `work` and fails it with a `timeout` error when it makes no progress for
 * `idleMs`. Big transfers call `touch` as bytes arrive, so a 500 MB file is
 * never cut for taking long, while a server that stops sending is.
 * `abort` must tear the connection down so the stalled call settles.
 */
export function withIdleTimeout<T>(
  idleMs: number,
  work: (touch: () => void) => Promise<T>,
  abort: () => void,
  makeError: () => ConveyorError,
): Promise<T> {
  if (idleMs <= 0) return work(() => undefined);
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const arm = (): void => {
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => {
        if (settled) return;
        settled = true;
        reject(makeError());
        abort();
      }, idleMs);
    };
    arm();
    work(() => {
      if (!settled) arm();
    }).then(
      (value) => {
        if (timer) clearTimeout(timer);
        if (settled) return;
        settled = true;
        resolve(value);
      },
      (err: unknown) => {
        if (timer) clearTimeout(timer);
        if (settled) return;
        settled = true;
        reject(err);
      },
    );
  });
}

export function timeoutError(what: string, ms: number): ConveyorError {
  return new ConveyorError("timeout", `${what}: no answer from the server for ${Math.round(ms / 1000)} s`, {
    retryable: true,
    hint: "The server stopped answering. It may be overloaded or a firewall drops idle connections; the run can be retried.",
  });
}
