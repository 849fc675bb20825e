import { CONNECT_RETRY, withRetry } from "../src/retry.js";
import type { ConnectorContext } from "./types.js";

// One live protocol session per connector, opened on first use, reopened after
// a drop, and used by one operation at a time: FTP and SFTP clients interleave
// badly (basic-ftp allows one command per client), and callers of a connector
// need not know. Opening is retried with CONNECT_RETRY; the error's own
// `retryable` flag decides, so a wrong password is tried exactly once.

export interface SessionHooks<S> {
  open(attempt: number): Promise<S>;
  alive(session: S): boolean;
  shut(session: S): Promise<void> | void;
}

export class Session<S> {
  private current: S | undefined;
  private tail: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly hooks: SessionHooks<S>,
    private readonly context: ConnectorContext,
    private readonly label: string,
    private readonly retryBaseDelayMs = -1,
  ) {
    context.signal?.addEventListener("abort", () => void this.drop(), { once: true });
  }

  /** Queue `fn` behind any running operation and give it a live session. */
  run<T>(fn: (session: S) => Promise<T>): Promise<T> {
    const next = this.tail.then(async () => fn(await this.ensure()));
    this.tail = next.catch(() => undefined);
    return next;
  }

  /** The session if one is open now; for facts that need no new connection. */
  peek(): S | undefined {
    return this.current;
  }

  private async ensure(): Promise<S> {
    if (this.current !== undefined && this.hooks.alive(this.current)) return this.current;
    await this.drop();
    this.closed = false;
    const policy = { ...CONNECT_RETRY, signal: this.context.signal };
    if (this.retryBaseDelayMs >= 0) {
      policy.baseDelayMs = this.retryBaseDelayMs;
      policy.maxDelayMs = Math.max(this.retryBaseDelayMs * 4, 1);
    }
    const session = await withRetry((attempt) => this.hooks.open(attempt), {
      ...policy,
      onRetry: (err, attempt, delayMs) =>
        this.context.logger.warn({ code: err.code, attempt, delayMs }, `${this.label}: connect failed, retrying: ${err.message}`),
    });
    if (this.closed) {
      await this.hooks.shut(session);
      throw new Error(`${this.label}: closed while connecting`);
    }
    this.current = session;
    return session;
  }

  private async drop(): Promise<void> {
    const session = this.current;
    this.current = undefined;
    this.closed = true;
    if (session !== undefined) await Promise.resolve(this.hooks.shut(session)).catch(() => undefined);
  }

  /** Waits for the running operation, then ends the session. */
  async close(): Promise<void> {
    await this.tail;
    await this.drop();
  }
}
