import { createHmac, randomBytes } from "node:crypto";
import type { Logger } from "../log.js";
import type { StoredOrder } from "./order-store.js";
import { newId, orderEnvelope, orderEvents, type Envelope } from "./webhook-events.js";
import type { Attempt, Delivery, Endpoint, WebhookStore } from "./webhook-store.js";

/**
 * Delivers webhook events (seed part 6): each message is signed and POSTed
 * to every enabled endpoint subscribed to its type; a delivery that fails is
 * retried with backoff, then marked failed, and can be retried by hand. The
 * seed leaves the schedule open: five seconds, five minutes, half an hour,
 * two, five and ten hours (seven attempts over about eighteen hours).
 */
export const RETRY_DELAYS_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000] as const;

/** A receiver must answer within 15 seconds (seed part 6). */
const TIMEOUT_MS = 15_000;
const BODY_KEPT = 1000;

export interface DispatchOptions {
  account: string;
  now: () => number;
  logger: Logger;
  retryDelaysMs?: readonly number[];
  timeoutMs?: number;
}

export function newSecret(): string {
  return `whsec_${randomBytes(24).toString("base64")}`;
}

/** `v1,` and the base64 HMAC-SHA256, keyed by the decoded secret, of `<id>.<timestamp>.<body>`. */
export function signature(secret: string, msgId: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  return `v1,${createHmac("sha256", key).update(`${msgId}.${timestamp}.${body}`).digest("base64")}`;
}

export type TestResult = { queued: true; id: string } | { queued: false; id: string; attempt: Attempt };

export class WebhookDispatcher {
  private timer: NodeJS.Timeout | null = null;
  private readonly inFlight = new Map<string, Promise<Delivery>>();
  private readonly abort = new AbortController();
  private stopped = false;
  private pumpSoon = false;
  private readonly delays: readonly number[];
  private readonly timeoutMs: number;

  constructor(
    private readonly store: WebhookStore,
    private readonly o: DispatchOptions,
  ) {
    this.delays = o.retryDelaysMs ?? RETRY_DELAYS_MS;
    this.timeoutMs = o.timeoutMs ?? TIMEOUT_MS;
  }

  /** Called inside the order's transaction, so the messages commit (or roll back) with the change. */
  orderChanged(before: StoredOrder | undefined, after: StoredOrder): void {
    // Most services have no endpoint: an order import then pays one query per change, not a comparison of the whole order.
    const enabled = this.store.endpoints().filter((e) => e.enabled);
    if (enabled.length === 0) return;
    const now = this.o.now();
    let queued = false;
    for (const type of orderEvents(before, after)) {
      const targets = enabled.filter((e) => e.eventTypes.includes(type));
      if (targets.length === 0) continue;
      this.enqueue(type, orderEnvelope(type, this.o.account, after, now), targets);
      queued = true;
    }
    if (queued) this.soon();
  }

  /** After the current transaction: a bulk of a thousand orders starts one pump, not a thousand. */
  private soon(): void {
    if (this.pumpSoon) return;
    this.pumpSoon = true;
    setImmediate(() => {
      this.pumpSoon = false;
      this.pump();
    });
  }

  private enqueue(type: string, envelope: Envelope, targets: readonly Endpoint[]): string {
    const msgId = newId("msg");
    const now = this.o.now();
    const created = new Date(now).toISOString();
    this.store.addMessage(msgId, type, JSON.stringify(envelope), created);
    for (const target of targets) this.store.addDelivery(msgId, target.id, type, created, now);
    return msgId;
  }

  /** Starts every delivery that is due; called at start-up too, to resume what a stopped service owed. */
  pump(): void {
    if (this.stopped) return;
    for (const d of this.store.due(this.o.now())) void this.attempt(d);
    this.arm();
  }

  private arm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const at = this.stopped ? null : this.store.nextDue();
    if (at === null) return;
    this.timer = setTimeout(() => this.pump(), Math.max(0, at - this.o.now()));
    this.timer.unref();
  }

  private attempt(d: Delivery): Promise<Delivery> {
    const key = `${d.msgId}_${d.endpointId}`;
    const running = this.inFlight.get(key);
    if (running) return running;
    // Leased past the timeout: the timer does not start it twice, and a service stopped mid-attempt sends it again.
    this.store.saveDelivery({ ...d, nextAt: this.o.now() + this.timeoutMs + 1000 });
    const p = this.send(d).finally(() => {
      this.inFlight.delete(key);
      this.arm();
    });
    this.inFlight.set(key, p);
    return p;
  }

  private async send(d: Delivery): Promise<Delivery> {
    const endpoint = this.store.endpoint(d.endpointId);
    const payload = this.store.payload(d.msgId);
    if (!endpoint || payload === undefined) return d;
    const started = this.o.now();
    const clock = performance.now();
    const timestamp = Math.floor(started / 1000);
    const attempt: Attempt = { attempt: d.attempts.length + 1, status: "failed", http_status: null, response_time_ms: 0, timestamp: new Date(started).toISOString(), response_body: "" };
    try {
      const res = await fetch(endpoint.url, {
        method: "POST",
        headers: { "Content-Type": "application/json", "Webhook-Id": d.msgId, "Webhook-Timestamp": String(timestamp), "Webhook-Signature": signature(endpoint.secret, d.msgId, timestamp, payload) },
        body: payload,
        redirect: "manual",
        signal: AbortSignal.any([AbortSignal.timeout(this.timeoutMs), this.abort.signal]),
      });
      attempt.http_status = res.status;
      attempt.response_body = (await res.text()).slice(0, BODY_KEPT);
      if (res.status >= 200 && res.status < 300) attempt.status = "success";
    } catch (err) {
      // Shutting down: the attempt does not count; the lease brings it back after a restart.
      if (this.stopped) return d;
      attempt.error = err instanceof Error && err.name === "TimeoutError" ? `no answer within ${this.timeoutMs / 1000} s` : String((err as Error).cause ?? err);
    }
    attempt.response_time_ms = Math.round(performance.now() - clock);
    const attempts = [...d.attempts, attempt];
    const delay = this.delays[attempts.length - 1];
    const next: Delivery = attempt.status === "success" ? { ...d, attempts, status: "success", nextAt: null } : delay === undefined ? { ...d, attempts, status: "failed", nextAt: null } : { ...d, attempts, status: "pending", nextAt: this.o.now() + delay };
    if (next.status === "failed") this.o.logger.warn({ event: "webhook_failed", endpoint: d.endpointId, msg: d.msgId, attempts: attempts.length }, "webhook delivery failed for good");
    this.store.saveDelivery(next);
    return next;
  }

  /** A failed delivery gets one more attempt now. */
  retry(msgId: string, endpointId: string): Delivery | "missing" | "not_failed" {
    const d = this.store.delivery(msgId, endpointId);
    if (!d) return "missing";
    if (d.status !== "failed") return "not_failed";
    const queued: Delivery = { ...d, status: "pending", nextAt: this.o.now() };
    this.store.saveDelivery(queued);
    this.soon();
    return queued;
  }

  /** The test route: an event to one endpoint, awaited for `waitMs`, then left to the queue. */
  async test(endpoint: Endpoint, type: string, order: Pick<StoredOrder, "oid" | "fields">, waitMs: number): Promise<TestResult> {
    const msgId = this.enqueue(type, orderEnvelope(type, this.o.account, order, this.o.now()), [endpoint]);
    const d = this.store.delivery(msgId, endpoint.id);
    if (!d) throw new Error(`delivery ${msgId} was not stored`);
    const id = `${msgId}_${endpoint.id}`;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), waitMs)));
    const done = await Promise.race([this.attempt(d), late]);
    clearTimeout(timer);
    const attempt = done?.attempts.at(-1);
    return attempt ? { queued: false, id, attempt } : { queued: true, id };
  }

  /** Stops the timer, aborts attempts under way (they stay due) and waits for them. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.abort.abort();
    await Promise.allSettled([...this.inFlight.values()]);
  }
}
