import { ConveyorError } from "../src/errors.js";
import { registerSecret } from "../src/secrets.js";
import type { HttpConnection } from "./http-connection.js";
import type { ConnectorContext } from "./types.js";
import { readSnippet, statusError, type HttpClient } from "./http-client.js";

/** Metadata key under which the OAuth token lives between runs. */
export const OAUTH_METADATA_KEY = "oauth";
/** A token this close to its expiry is refreshed before use. */
export const OAUTH_REFRESH_MARGIN_MS = 60_000;

interface CachedToken {
  address: string;
  client_id: string;
  access_token: string;
  token_type: string;
  /** Epoch ms; null when the server gave no lifetime (then only a 401 refreshes it). */
  expires_at: number | null;
}

function isCachedToken(v: unknown): v is CachedToken {
  const t = v as Partial<CachedToken> | null;
  return !!t && typeof t === "object" && typeof t.access_token === "string" && typeof t.address === "string" && typeof t.client_id === "string";
}

async function readJson(res: Awaited<ReturnType<HttpClient["send"]>>, what: string): Promise<Record<string, unknown>> {
  const text = await readSnippet(res.body);
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // fall through to the error below
  }
  throw new ConveyorError("auth", `${what} did not answer with a JSON object`, { hint: "check the login or token address" });
}

function pickToken(body: Record<string, unknown>): string | undefined {
  for (const source of [body, body.data]) {
    if (!source || typeof source !== "object") continue;
    const rec = source as Record<string, unknown>;
    for (const key of ["access_token", "token", "accessToken"]) if (typeof rec[key] === "string" && rec[key]) return rec[key];
  }
  return undefined;
}

/**
 * Produces the Authorization header of an http connection: basic auth, a
 * bearer token from `login_address`, or an OAuth client-credentials token kept
 * in the automation's metadata and refreshed before it expires.
 */
export class HttpAuth {
  private loginToken: string | undefined;

  constructor(
    private readonly conn: HttpConnection,
    private readonly ctx: ConnectorContext,
    private readonly client: HttpClient,
  ) {
    registerSecret(conn.password);
    registerSecret(conn.oauth?.client_secret);
  }

  private now(): number {
    return (this.ctx.now ?? Date.now)();
  }

  get kind(): "oauth" | "login" | "basic" | "none" {
    if (this.conn.oauth) return "oauth";
    if (this.conn.login_address) return "login";
    if (this.conn.username !== undefined || this.conn.password !== undefined) return "basic";
    return "none";
  }

  async header(): Promise<string | undefined> {
    switch (this.kind) {
      case "oauth":
        return `Bearer ${await this.oauthToken(false)}`;
      case "login":
        this.loginToken ??= await this.login();
        return `Bearer ${this.loginToken}`;
      case "basic":
        return `Basic ${Buffer.from(`${this.conn.username ?? ""}:${this.conn.password ?? ""}`).toString("base64")}`;
      default:
        return undefined;
    }
  }

  /** After a 401: get a fresh token once. False when there is nothing to refresh (basic auth). */
  async refresh(): Promise<boolean> {
    if (this.kind === "oauth") {
      await this.oauthToken(true);
      return true;
    }
    if (this.kind === "login") {
      this.loginToken = await this.login();
      return true;
    }
    return false;
  }

  private async login(): Promise<string> {
    const address = this.conn.login_address ?? "";
    const res = await this.client.send({
      method: "POST",
      url: address,
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ username: this.conn.username ?? "", password: this.conn.password ?? "" }),
    });
    if (res.status >= 300) throw statusError(res.status, "POST", address, await readSnippet(res.body));
    const token = pickToken(await readJson(res, "connection.login_address"));
    if (!token) throw new ConveyorError("auth", "connection.login_address answered without a token (looked for token and access_token)");
    registerSecret(token);
    return token;
  }

  private async oauthToken(force: boolean): Promise<string> {
    const oauth = this.conn.oauth;
    if (!oauth) throw new ConveyorError("internal", "oauth token asked for without connection.oauth");
    const cached = this.ctx.metadata.get(OAUTH_METADATA_KEY);
    if (!force && isCachedToken(cached) && cached.address === oauth.address && cached.client_id === oauth.client_id) {
      registerSecret(cached.access_token);
      if (cached.expires_at === null || cached.expires_at - OAUTH_REFRESH_MARGIN_MS > this.now()) return cached.access_token;
    }
    const method = (oauth.method ?? "POST").toUpperCase();
    const form = new URLSearchParams({ grant_type: oauth.grant_type ?? "client_credentials", client_id: oauth.client_id, client_secret: oauth.client_secret });
    const url = method === "GET" ? `${oauth.address}${oauth.address.includes("?") ? "&" : "?"}${form.toString()}` : oauth.address;
    const res = await this.client.send({
      method,
      url,
      headers: { accept: "application/json", ...(method === "GET" ? {} : { "content-type": "application/x-www-form-urlencoded" }) },
      ...(method === "GET" ? {} : { body: form.toString() }),
    });
    if (res.status >= 300) throw statusError(res.status, method, oauth.address, await readSnippet(res.body));
    const body = await readJson(res, "connection.oauth.address");
    const token = pickToken(body);
    if (!token) throw new ConveyorError("auth", "the oauth token endpoint answered without access_token");
    registerSecret(token);
    const expiresIn = Number(body.expires_in);
    const entry: CachedToken = {
      address: oauth.address,
      client_id: oauth.client_id,
      access_token: token,
      token_type: typeof body.token_type === "string" ? body.token_type : "Bearer",
      expires_at: Number.isFinite(expiresIn) && expiresIn > 0 ? this.now() + expiresIn * 1000 : null,
    };
    await this.ctx.metadata.set(OAUTH_METADATA_KEY, entry);
    return token;
  }
}
