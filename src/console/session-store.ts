import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { AccountStore } from "../daemon/accounts.js";
import type { SessionRows } from "../daemon/daemon-db.js";
import type { ConsoleSession } from "./context.js";

/** 32 random bytes in base64url: what the cookie holds. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** A session's last-seen time is written at most this often, so page loads do not each write the database. */
const TOUCH_EVERY_MS = 60_000;

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

function mac(sessionToken: string, apiToken: string): string {
  return createHmac("sha256", sessionToken).update(apiToken).digest("hex");
}

/**
 * Console sign-ins. The browser holds a random token; the database only its
 * sha256, so a copy of the database opens no session. The API token the
 * session signed in with is kept as an HMAC keyed by the session token: the
 * database alone cannot be used to guess a weak API token offline, and a
 * session whose account got a new token stops at its next request. Sessions
 * end at a fixed time after sign-in; using them does not extend them.
 */
export class SessionStore {
  constructor(
    private readonly rows: SessionRows,
    private readonly accounts: AccountStore,
    private readonly lifetimeMs: number,
    private readonly now: () => Date,
  ) {}

  /** The CSRF token of a session: derived, so it needs no column and no cookie of its own. */
  static csrfOf(sessionToken: string): string {
    return createHash("sha256").update(`conveyor console csrf\u0000${sessionToken}`).digest("base64url");
  }

  async create(account: string, apiToken: string): Promise<{ token: string; maxAgeSeconds: number }> {
    const token = randomBytes(32).toString("base64url");
    const now = this.now();
    await this.rows.prune(now.toISOString());
    await this.rows.insert({
      id_hash: sha256(token),
      account,
      token_mac: mac(token, apiToken),
      created: now.toISOString(),
      expires: new Date(now.getTime() + this.lifetimeMs).toISOString(),
      last_seen: now.toISOString(),
    });
    return { token, maxAgeSeconds: Math.floor(this.lifetimeMs / 1000) };
  }

  /** The session the cookie's token opens, or null (unknown, expired, or its account's token changed or was removed). */
  async check(token: string | undefined): Promise<ConsoleSession | null> {
    if (token === undefined || !TOKEN.test(token)) return null;
    const idHash = sha256(token);
    const row = await this.rows.get(idHash);
    if (!row) return null;
    const now = this.now();
    if (row.expires <= now.toISOString()) {
      await this.rows.delete(idHash);
      return null;
    }
    const credentials = await this.accounts.credentials(row.account);
    const expected = Buffer.from(row.token_mac, "hex");
    const actual = Buffer.from(mac(token, credentials?.apiToken ?? ""), "hex");
    if (!credentials || expected.length !== actual.length || !timingSafeEqual(expected, actual)) {
      await this.rows.delete(idHash);
      return null;
    }
    if (now.getTime() - Date.parse(row.last_seen) > TOUCH_EVERY_MS) await this.rows.touch(idHash, now.toISOString());
    return { account: row.account, csrf: SessionStore.csrfOf(token) };
  }

  async end(token: string | undefined): Promise<void> {
    if (token !== undefined && TOKEN.test(token)) await this.rows.delete(sha256(token));
  }
}
