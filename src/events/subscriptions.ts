import type { Logger } from "../log.js";
import type { DefinitionService } from "../daemon/definitions.js";

export interface Subscriber {
  /** The automation's key in the daemon (its id). */
  key: string;
  account: string;
  events: readonly string[];
}

/**
 * Which automations each event type starts, per account, read from the
 * definitions: active ones that are not drafts and list `events`. Kept in
 * memory and read again whenever the definitions change (and, in a cluster,
 * on the periodic re-read), so the intake does not parse every definition for
 * every delivery.
 */
export class Subscriptions {
  private list: Subscriber[] = [];
  private loading: Promise<void> | null = null;
  private again = false;

  constructor(
    private readonly definitions: DefinitionService,
    private readonly logger: Logger,
  ) {}

  /** Reads the definitions again; calls that come while a read runs lead to one more read after it. */
  refresh(): Promise<void> {
    if (this.loading) {
      this.again = true;
      return this.loading;
    }
    this.loading = this.load().finally(() => {
      this.loading = null;
      if (this.again) {
        this.again = false;
        void this.refresh();
      }
    });
    return this.loading;
  }

  all(): readonly Subscriber[] {
    return this.list;
  }

  /** The automations of the account the event type starts. */
  automationsFor(account: string, type: string): string[] {
    return this.list.filter((s) => s.account === account && s.events.includes(type)).map((s) => s.key);
  }

  /** Accounts with at least one automation on events, with the union of their types (sorted). */
  byAccount(): Map<string, string[]> {
    const out = new Map<string, Set<string>>();
    for (const s of this.list) {
      const types = out.get(s.account) ?? new Set<string>();
      for (const t of s.events) types.add(t);
      out.set(s.account, types);
    }
    return new Map([...out].map(([account, types]) => [account, [...types].sort()]));
  }

  private async load(): Promise<void> {
    const next: Subscriber[] = [];
    for (const stored of await this.definitions.all()) {
      try {
        const { automation } = this.definitions.effective(stored);
        const events = automation.events ?? [];
        if (events.length > 0 && automation.active && !automation.draft) next.push({ key: String(stored.id), account: stored.account, events });
      } catch (err) {
        // A definition that no longer validates starts nothing; its runs report why.
        this.logger.debug({ automation: stored.id, err: (err as Error).message }, "definition left out of the event subscriptions");
      }
    }
    this.list = next;
  }
}
