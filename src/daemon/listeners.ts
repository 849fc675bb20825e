/** Typed listeners; a throwing one (a log line, a metric) goes to `onError` and never breaks the queue. */
export class Listeners<Events extends object> {
  private readonly lists = new Map<keyof Events, Array<(event: never) => void>>();

  constructor(private readonly onError: (err: unknown, name: keyof Events) => void) {}

  on<K extends keyof Events>(name: K, fn: (event: Events[K]) => void): () => void {
    this.lists.set(name, [...(this.lists.get(name) ?? []), fn]);
    return () => this.lists.set(name, (this.lists.get(name) ?? []).filter((f) => f !== fn));
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
