/**
 * A typed listener list. A throwing listener (a log line, a metric) must never
 * break the queue or the scheduler that emits, so its error goes to `onError`.
 */
export class Listeners<Events extends object> {
  private readonly lists = new Map<keyof Events, Array<(event: never) => void>>();

  constructor(private readonly onError: (err: unknown, name: keyof Events) => void = () => undefined) {}

  on<K extends keyof Events>(name: K, fn: (event: Events[K]) => void): () => void {
    const list = this.lists.get(name) ?? [];
    list.push(fn);
    this.lists.set(name, list);
    return () => {
      const current = this.lists.get(name);
      if (current) this.lists.set(name, current.filter((f) => f !== fn));
    };
  }

  emit<K extends keyof Events>(name: K, event: Events[K]): void {
    for (const fn of this.lists.get(name) ?? []) {
      try {
        (fn as (e: Events[K]) => void)(event);
      } catch (err) {
        this.onError(err, name);
      }
    }
  }
}
