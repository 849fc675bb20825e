import type { RunEvents } from "../daemon/types.js";

/**
 * The daemon's durable record of webhook events, in the database its state
 * uses (the SQLite file, or the PostgreSQL schema every daemon of a cluster
 * shares): each event once, with one claim per automation it starts, and the
 * webhook endpoint registered for each account.
 *
 * A claim moves `pending` → `taken` (by one run, atomically) → `done`, or
 * back to `pending` when that run failed, until `failed` after too many tries
 * (the order export's catch-up schedule covers those).
 */
export type ClaimState = "pending" | "taken" | "done" | "failed";

export interface IncomingEvent {
  account: string;
  eventId: string;
  webhookId: string;
  type: string;
  orderId: string | null;
  /** The body as received, kept for diagnosis; never holds a secret (the service signs, it does not embed the key). */
  body: string;
}

export interface ClaimRow {
  account: string;
  eventId: string;
  automation: string;
  state: ClaimState;
  runId: string | null;
  attempts: number;
}

export interface Registration {
  account: string;
  endpointId: string;
  /** The random path segment of the intake URL; finds the account of a delivery. */
  key: string;
  url: string;
  eventTypes: string[];
  /** Sealed with the daemon's secret key (`enc:v1:`), as every stored secret. */
  secret: string;
  /** The secret before the last rotation, accepted for deliveries signed before it until `updated` is five minutes old; sealed. */
  previousSecret: string | null;
  /** When the registration was last saved (created, patched or rotated), ISO 8601. */
  updated: string;
}

export interface SettleResult {
  /** Claims the run finished with (done), or handed back (pending again). */
  settled: number;
  /** Event ids whose claim ran out of attempts and is now `failed`. */
  failed: string[];
}

export interface EventStore {
  /**
   * The event and one pending claim per automation, in one transaction; false
   * (and nothing written) when the account already has this event id or this
   * Webhook-Id.
   */
  record(event: IncomingEvent, automations: readonly string[]): Promise<boolean>;
  /** Moves up to `max` pending claims of the automation to `taken` by the run, atomically; the events and their orders. */
  take(automation: string, runId: string, max: number): Promise<RunEvents>;
  /** The run's taken claims: done, or pending again with one attempt more (`failed` once `maxAttempts` are spent). */
  settle(runId: string, done: boolean, maxAttempts: number): Promise<SettleResult>;
  /** Runs holding taken claims. */
  takenRuns(): Promise<string[]>;
  /** Automations with pending claims. */
  pendingAutomations(): Promise<string[]>;
  hasPending(automation: string): Promise<boolean>;
  /** Pending claims of the automation last touched before `before` become `failed`; their event ids. */
  dropPending(automation: string, before: Date): Promise<string[]>;
  /** Claims, for the tests and the lead's benches: of one event, or all. */
  claims(eventId?: string): Promise<ClaimRow[]>;
  /** Forgets events received before `before` whose claims are all done or failed; the number forgotten. */
  prune(before: Date): Promise<number>;
  /** PostgreSQL: the run holds its automation's lock or waits in the cluster queue (another daemon may be about to start it). */
  runHeld(runId: string): Promise<boolean>;

  registration(account: string): Promise<Registration | null>;
  registrationByKey(key: string): Promise<Registration | null>;
  registrations(): Promise<Registration[]>;
  saveRegistration(row: Registration): Promise<void>;
  deleteRegistration(account: string): Promise<void>;
  /** Runs `fn` unless another daemon of the cluster is registering endpoints right now (then null). */
  exclusive<T>(fn: () => Promise<T>): Promise<T | null>;
}

/** Distinct order ids in the order first seen. */
export function runEventsOf(rows: ReadonlyArray<{ event_id: string; order_id: string | null }>): RunEvents {
  const orders = new Set<string>();
  for (const r of rows) if (r.order_id) orders.add(r.order_id);
  return { ids: rows.map((r) => r.event_id), orders: [...orders] };
}
