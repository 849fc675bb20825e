/**
 * A status request for an unfinished bulk job or export may wait a moment for
 * it to end (a long poll): a client polls on a timer, so a job that ended
 * just after a poll left the client idle until its next one, the larger part
 * of a small live run's wait for its bulk files. The answer is the same a
 * later poll would give; a client that never waits sees no difference but
 * the delay.
 *
 * @module
 */

/** How long a status request waits for its job to end before it answers with the job under way. */
export const STATUS_HOLD_MS = 1000;

export class JobWaits {
  private readonly waiting = new Map<string, Set<() => void>>();

  constructor(private readonly holdMs = STATUS_HOLD_MS) {}

  /** Settles when `key` ends (`ended`), after the hold, or on `releaseAll`, whichever comes first. */
  wait(key: string): Promise<void> {
    return new Promise((resolve) => {
      const waiters = this.waiting.get(key) ?? new Set<() => void>();
      this.waiting.set(key, waiters);
      const done = (): void => {
        clearTimeout(timer);
        waiters.delete(done);
        if (waiters.size === 0 && this.waiting.get(key) === waiters) this.waiting.delete(key);
        resolve();
      };
      const timer = setTimeout(done, this.holdMs);
      waiters.add(done);
    });
  }

  /**
   * What `read` gives for the job `key`: at once when it has ended (or is
   * unknown), else once it ends or the hold is over, read again then.
   */
  async latest<T extends { status: string }>(key: string, read: () => T | undefined): Promise<T | undefined> {
    const now = read();
    if (now === undefined || (now.status !== "queued" && now.status !== "running")) return now;
    await this.wait(key);
    return read();
  }

  /** Requests waiting now. */
  get pending(): number {
    let n = 0;
    for (const waiters of this.waiting.values()) n += waiters.size;
    return n;
  }

  /** The job `key` finished, failed or was canceled: its waiting requests answer now. */
  ended(key: string): void {
    for (const done of [...(this.waiting.get(key) ?? [])]) done();
  }

  /** The service stops: no request waits for a job that will not run. */
  releaseAll(): void {
    for (const key of [...this.waiting.keys()]) this.ended(key);
  }
}
