/**
 * Turns a push source (stream events) into batches pulled by an async loop, pausing the source
 * while the consumer is behind so memory stays flat whatever the file size.
 */
export class PushQueue<T> {
  private items: T[] = [];
  private wake: (() => void) | null = null;
  private done = false;
  private failure: unknown = null;
  private paused = false;

  constructor(
    private readonly highWater: number,
    private readonly pause: () => void,
    private readonly resume: () => void,
  ) {}

  push(item: T): void {
    this.items.push(item);
    if (!this.paused && this.items.length >= this.highWater) {
      this.paused = true;
      this.pause();
    }
    this.notify();
  }

  end(): void {
    this.done = true;
    this.notify();
  }

  fail(err: unknown): void {
    if (this.failure === null) this.failure = err;
    this.done = true;
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  async *batches(): AsyncGenerator<T[]> {
    for (;;) {
      if (this.items.length) {
        const batch = this.items;
        this.items = [];
        if (this.paused) {
          this.paused = false;
          this.resume();
        }
        yield batch;
        continue;
      }
      if (this.failure !== null) throw this.failure;
      if (this.done) return;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }
}
