import { randomBytes } from "node:crypto";
import { decryptValue, encryptValue } from "../definition/crypto.js";
import type { Logger } from "../log.js";
import type { ServiceClient } from "../service/index.js";
import type { EventStore, Registration } from "./store.js";
import { TIMESTAMP_TOLERANCE_MS } from "./signature.js";
import type { Subscriptions } from "./subscriptions.js";

/** The intake's route; `<key>` finds the account. */
export const INTAKE_PATH = "/v3/events/webhook/";
const DESCRIPTION = "Conveyor daemon";

export interface RegistrarOptions {
  store: EventStore;
  subscriptions: Subscriptions;
  clientFor: (account: string) => Promise<ServiceClient>;
  /** Where the service reaches this daemon (CONVEYOR_PUBLIC_URL, or the listen address with the embedded service); null: nowhere. */
  publicUrl: () => string | null;
  secretKey: Buffer;
  logger: Logger;
  now?: () => Date;
}

export interface CheckReport {
  created: string[];
  updated: string[];
  removed: string[];
  /** Another daemon of the cluster was checking; this one did nothing. */
  skipped: boolean;
}

/**
 * One webhook endpoint per account that has automations on events, at the
 * service the account talks to. A check compares what the service has with
 * what the automations need: an endpoint that is gone is created again (new
 * key and secret), one whose types, address or switch differ is patched, and
 * one no automation needs any more is deleted. The secret is stored sealed.
 */
export class Registrar {
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: RegistrarOptions) {}

  /** Checks now, then every `everyMs`. */
  start(everyMs: number): void {
    const tick = (): void => void this.check().catch((err: unknown) => this.options.logger.error({ err }, "checking the webhook endpoints failed; trying again later"));
    tick();
    this.timer = setInterval(tick, everyMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  async check(): Promise<CheckReport> {
    const report = await this.options.store.exclusive(() => this.checkAll());
    return report ?? { created: [], updated: [], removed: [], skipped: true };
  }

  /** The secrets a delivery to `key` may be signed with (current first), and the account; null for a key no registration has. */
  async secretsFor(key: string): Promise<{ account: string; secrets: string[] } | null> {
    const row = await this.options.store.registrationByKey(key);
    if (!row) return null;
    const secrets = [row.secret, this.rotating(row) ? row.previousSecret : null].filter((s): s is string => s !== null).map((s) => decryptValue(s, this.options.secretKey));
    return { account: row.account, secrets };
  }

  /**
   * Asks the service for a new secret (it stops signing with the old one at
   * once) and stores it; the old one is accepted only for deliveries signed
   * before the switch, which stop passing the timestamp check within
   * TIMESTAMP_TOLERANCE_MS: a leaked secret is worthless once that has
   * passed. Null when the account has no endpoint; `busy` when another
   * daemon of the cluster is checking the endpoints.
   */
  async rotate(account: string): Promise<{ endpoint: string } | null | "busy"> {
    const { store, secretKey, logger } = this.options;
    const done = await store.exclusive(async () => {
      const row = await store.registration(account);
      if (!row) return { endpoint: null };
      const client = await this.options.clientFor(account);
      const secret = await client.rotateWebhookSecret(row.endpointId);
      await store.saveRegistration({ ...row, secret: encryptValue(secret, secretKey), previousSecret: row.secret, updated: this.stamp() });
      logger.info({ event: "webhook_secret_rotated", account, endpoint: row.endpointId }, "webhook signing secret rotated; the previous one is accepted for deliveries signed before the switch, for 5 minutes");
      return { endpoint: row.endpointId };
    });
    if (done === null) return "busy";
    return done.endpoint === null ? null : { endpoint: done.endpoint };
  }

  /** True within TIMESTAMP_TOLERANCE_MS of the last rotation (or patch): deliveries signed with the previous secret may still arrive. */
  private rotating(row: Registration): boolean {
    const now = (this.options.now?.() ?? new Date()).getTime();
    return row.previousSecret !== null && now - Date.parse(row.updated) <= TIMESTAMP_TOLERANCE_MS;
  }

  private async checkAll(): Promise<CheckReport> {
    const { store, subscriptions, logger } = this.options;
    await subscriptions.refresh();
    const wanted = subscriptions.byAccount();
    const report: CheckReport = { created: [], updated: [], removed: [], skipped: false };
    for (const row of await store.registrations()) {
      if (wanted.has(row.account)) continue;
      await this.remove(row).then(
        () => report.removed.push(row.account),
        (err: unknown) => logger.error({ err, account: row.account }, "could not delete the webhook endpoint no automation needs any more"),
      );
    }
    const base = this.options.publicUrl();
    if (wanted.size > 0 && base === null) {
      logger.warn({ event: "webhooks_unregistered" }, "automations run on events, but no webhook endpoint is registered: set CONVEYOR_PUBLIC_URL to where the service reaches this daemon");
      return report;
    }
    for (const [account, types] of wanted) {
      try {
        const change = await this.ensure(account, types, base ?? "");
        if (change) report[change].push(account);
      } catch (err) {
        logger.error({ err, account }, "could not register the webhook endpoint of the account; its events wait for the next check");
      }
    }
    return report;
  }

  private async ensure(account: string, types: string[], base: string): Promise<"created" | "updated" | null> {
    const row = await this.options.store.registration(account);
    const client = await this.options.clientFor(account);
    const found = row ? await client.getWebhookEndpoint(row.endpointId) : null;
    if (!row || !found) {
      await this.create(account, types, base, client);
      return "created";
    }
    const url = intakeUrl(base, row.key);
    const same = found.url === url && found.enabled && sameTypes(found.event_types, types);
    if (same) return null;
    await client.updateWebhookEndpoint(row.endpointId, { url, event_types: types, enabled: true });
    // A patch moves `updated`: the previous secret is kept only if a rotation's window was still open.
    await this.options.store.saveRegistration({ ...row, url, eventTypes: types, previousSecret: this.rotating(row) ? row.previousSecret : null, updated: this.stamp() });
    this.options.logger.info({ event: "webhook_endpoint_updated", account, endpoint: row.endpointId, event_types: types }, "webhook endpoint updated");
    return "updated";
  }

  private async create(account: string, types: string[], base: string, client: ServiceClient): Promise<void> {
    const key = randomBytes(18).toString("base64url");
    const url = intakeUrl(base, key);
    const endpoint = await client.createWebhookEndpoint({ url, description: DESCRIPTION, event_types: types, enabled: true });
    const row: Registration = { account, endpointId: endpoint.id, key, url, eventTypes: types, secret: encryptValue(endpoint.secret, this.options.secretKey), previousSecret: null, updated: this.stamp() };
    await this.options.store.saveRegistration(row);
    this.options.logger.info({ event: "webhook_endpoint_created", account, endpoint: endpoint.id, event_types: types }, "webhook endpoint registered with the service");
  }

  private async remove(row: Registration): Promise<void> {
    const client = await this.options.clientFor(row.account);
    await client.deleteWebhookEndpoint(row.endpointId);
    await this.options.store.deleteRegistration(row.account);
    this.options.logger.info({ event: "webhook_endpoint_deleted", account: row.account, endpoint: row.endpointId }, "webhook endpoint deleted: no automation of the account runs on events");
  }

  private stamp(): string {
    return (this.options.now?.() ?? new Date()).toISOString();
  }
}

export function intakeUrl(base: string, key: string): string {
  return `${base.replace(/\/+$/, "")}${INTAKE_PATH}${key}`;
}

/** The service may answer types with its prefix (`sds.order.created`); compared without. */
function sameTypes(a: readonly string[], b: readonly string[]): boolean {
  const norm = (list: readonly string[]): string => [...new Set(list.map((t) => t.split(".").slice(-2).join(".")))].sort().join(",");
  return norm(a) === norm(b);
}
