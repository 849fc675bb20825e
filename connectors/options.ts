/**
 * Internal knobs a connector factory takes besides the connection; not part of
 * the automation definition. Tests shorten them so a stalled server fails in
 * seconds; production uses the defaults.
 */
export interface TransportOptions {
  /** No progress for this long fails the operation with `timeout`. */
  idleTimeoutMs?: number;
  /** The whole connect (TCP, TLS/SSH handshake, login) must finish within this. */
  connectTimeoutMs?: number;
  /** Override CONNECT_RETRY's first backoff delay (tests). */
  retryBaseDelayMs?: number;
}

/** Idle, not total: a 500 MB file keeps sending, a stalled server does not. */
export const DEFAULT_IDLE_TIMEOUT_MS = 60_000;
export const DEFAULT_CONNECT_TIMEOUT_MS = 20_000;

export function resolveOptions(options: TransportOptions | undefined): Required<TransportOptions> {
  return {
    idleTimeoutMs: options?.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
    connectTimeoutMs: options?.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    retryBaseDelayMs: options?.retryBaseDelayMs ?? -1,
  };
}
