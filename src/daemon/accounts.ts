import { randomBytes, timingSafeEqual, createHash } from "node:crypto";
import { decryptValue, encryptValue } from "../definition/index.js";
import { ConveyorError } from "../errors.js";
import { registerSecret } from "../secrets.js";
import type { DaemonDb } from "./daemon-db.js";

export interface AccountInfo {
  apiUser: string;
  created: string;
  /** `cli` (conveyor accounts add), `embedded` (the embedded service's account) or `settings`. */
  origin: string;
}

export interface AccountCredentials {
  apiUser: string;
  apiToken: string;
}

/** An API user is also a storage folder name (`<storage>/<user>/`): keep it to safe characters. */
const USER = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$/;

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

/**
 * The daemon's accounts (service.md, "Automations"): an API user and its token,
 * the token encrypted at rest with the worker's secret key. A request to the
 * daemon authenticates with that pair; a run uses it as its service credentials.
 */
export class AccountStore {
  constructor(
    private readonly db: DaemonDb,
    private readonly key: Buffer,
  ) {}

  /** Adds an account, or replaces its token. Returns the token (generated when not given). */
  add(apiUser: string, token?: string, origin = "cli"): string {
    if (!USER.test(apiUser)) {
      throw new ConveyorError("usage", `API user "${apiUser}" is not allowed: use 1–128 letters, digits, ".", "_", "@" or "-", starting with a letter or digit`);
    }
    const value = token ?? randomBytes(24).toString("hex");
    if (value.length < 8) throw new ConveyorError("usage", "a token needs at least 8 characters");
    registerSecret(value);
    this.db
      .prepare(
        `INSERT INTO daemon_accounts (api_user, token, created, origin) VALUES (?, ?, ?, ?)
         ON CONFLICT (api_user) DO UPDATE SET token = excluded.token, origin = excluded.origin`,
      )
      .run(apiUser, encryptValue(value, this.key), new Date().toISOString(), origin);
    return value;
  }

  /** Registers an account whose token comes from elsewhere (the embedded service), unless it is already there with that token. */
  ensure(apiUser: string, token: string, origin: string): void {
    const current = this.credentials(apiUser);
    if (current?.apiToken !== token) this.add(apiUser, token, origin);
  }

  remove(apiUser: string): boolean {
    return this.db.prepare("DELETE FROM daemon_accounts WHERE api_user = ?").run(apiUser).changes > 0;
  }

  list(): AccountInfo[] {
    const rows = this.db.prepare("SELECT api_user, created, origin FROM daemon_accounts ORDER BY api_user").all() as Array<{ api_user: string; created: string; origin: string }>;
    return rows.map((r) => ({ apiUser: r.api_user, created: r.created, origin: r.origin }));
  }

  credentials(apiUser: string): AccountCredentials | null {
    const row = this.db.prepare("SELECT token FROM daemon_accounts WHERE api_user = ?").get(apiUser) as { token: string } | undefined;
    if (!row) return null;
    const apiToken = decryptValue(row.token, this.key);
    registerSecret(apiToken);
    return { apiUser, apiToken };
  }

  /** Constant-time check of a request's pair; an unknown user costs the same compare as a wrong token. */
  verify(apiUser: string, token: string): boolean {
    const known = USER.test(apiUser) ? this.credentials(apiUser) : null;
    const expected = digest(known?.apiToken ?? "\u0000no account\u0000");
    return timingSafeEqual(expected, digest(token)) && known !== null;
  }
}
