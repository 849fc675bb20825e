import { randomBytes, timingSafeEqual, createHash } from "node:crypto";
import { decryptValue, encryptValue } from "../definition/index.js";
import { ConveyorError } from "../errors.js";
import { registerSecret } from "../secrets.js";
import type { AccountRows } from "./daemon-db.js";

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
    private readonly rows: AccountRows,
    private readonly key: Buffer,
  ) {}

  /** Adds an account, or replaces its token. Returns the token (generated when not given). */
  async add(apiUser: string, token?: string, origin = "cli"): Promise<string> {
    if (!USER.test(apiUser)) {
      throw new ConveyorError("usage", `API user "${apiUser}" is not allowed: use 1–128 letters, digits, ".", "_", "@" or "-", starting with a letter or digit`);
    }
    const value = token ?? randomBytes(24).toString("hex");
    if (value.length < 8) throw new ConveyorError("usage", "a token needs at least 8 characters");
    registerSecret(value);
    await this.rows.upsert({ api_user: apiUser, token: encryptValue(value, this.key), created: new Date().toISOString(), origin });
    return value;
  }

  /** Registers an account whose token comes from elsewhere (the embedded service), unless it is already there with that token. */
  async ensure(apiUser: string, token: string, origin: string): Promise<void> {
    const current = await this.credentials(apiUser);
    if (current?.apiToken !== token) await this.add(apiUser, token, origin);
  }

  async remove(apiUser: string): Promise<boolean> {
    return this.rows.delete(apiUser);
  }

  async list(): Promise<AccountInfo[]> {
    return (await this.rows.list()).map((r) => ({ apiUser: r.api_user, created: r.created, origin: r.origin }));
  }

  async credentials(apiUser: string): Promise<AccountCredentials | null> {
    const sealed = await this.rows.token(apiUser);
    if (sealed === null) return null;
    const apiToken = decryptValue(sealed, this.key);
    registerSecret(apiToken);
    return { apiUser, apiToken };
  }

  /** Constant-time check of a request's pair; an unknown user costs the same compare as a wrong token. */
  async verify(apiUser: string, token: string): Promise<boolean> {
    const known = USER.test(apiUser) ? await this.credentials(apiUser) : null;
    const expected = digest(known?.apiToken ?? "\u0000no account\u0000");
    return timingSafeEqual(expected, digest(token)) && known !== null;
  }
}
