import { timingSafeEqual } from "node:crypto";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { fields, sendError, text, unixTime } from "../http/envelopes.js";
import { readFields } from "./form.js";

export interface Account {
  apiUser: string;
  apiToken: string;
}

declare module "fastify" {
  interface FastifyRequest {
    /** The API user the credentials named: the account owner or one of its sub-users. */
    apiUser?: string;
  }
  interface FastifyContextConfig {
    /** Open without credentials: POST /v1/auth and presigned file links. */
    public?: boolean;
  }
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The account's users as sign-in and `GET /v1/auth` see them (profile.ts answers from the user store). */
export interface AuthUsers {
  /** Is the pair a sub-user's credential. */
  check(user: string, token: string): boolean;
  /** The profile of `GET /v1/auth` for a signed-in user: the owner or a sub-user. */
  profile(user: string): Record<string, unknown>;
}

const OWNER_ONLY: AuthUsers = { check: () => false, profile: () => ({}) };

/**
 * The one account of the embedded service. `X-Auth-User` and `X-Auth-Token`
 * together are the credential (seed v3 part 5, v1 part 5); `X-Auth-Integration`
 * is only a partner name and never lets a request in. `GET /v1/auth` may name
 * the user with `?apiuser=` instead of the header (v1 part 5.3).
 */
export function registerAuth(app: FastifyInstance, account: Account, users: AuthUsers = OWNER_ONLY): void {
  const valid = (user: string | undefined, token: string | undefined): boolean =>
    user !== undefined && token !== undefined && same(user, account.apiUser) && same(token, account.apiToken);
  const subUser = (user: string | undefined, token: string | undefined): boolean => user !== undefined && token !== undefined && users.check(user, token);

  app.addHook("onRequest", async (request, reply) => {
    if (reply.sent) return reply;
    if (request.routeOptions.config.public || request.method === "OPTIONS") return undefined;
    const token = text(request.headers["x-auth-token"]);
    let user = text(request.headers["x-auth-user"]);
    if (user === undefined && isAuthProfile(request)) user = text(fields(request.query).apiuser);
    if (valid(user, token) || subUser(user, token)) {
      request.apiUser = user;
      return undefined;
    }
    const why = user === undefined || token === undefined ? "missing X-Auth-User or X-Auth-Token header" : "wrong API user or token";
    return sendError(request, reply, 401, `${why}: send both headers with the API user and token (X-Auth-Integration is not a credential)`);
  });

  // The seed's fields (role, userid, userpk) over the user's profile; `user` as the official client reads it.
  const profile = (user: string): Record<string, unknown> => ({
    result: "success",
    ...users.profile(user),
    user,
    username: user,
    ...(user === account.apiUser ? { role: "owner", userid: "1", userpk: 0 } : {}),
    time: unixTime(),
  });

  app.post("/v1/auth", { config: { public: true } }, async (request, reply) => {
    const body = await readFields(request);
    const user = text(body.user);
    const pass = text(body.pass);
    // The embedded account has no separate password: its API token is the password, and a sub-user's is its own token.
    if (valid(user, pass) || subUser(user, pass)) return { ...profile(user ?? ""), token: pass };
    return sendError(request, reply, 401, "wrong user or pass: the embedded service's password is the API token (a sub-user's, its own token)");
  });

  app.get("/v1/auth", async (request) => profile(request.apiUser ?? account.apiUser));
}

function isAuthProfile(request: FastifyRequest): boolean {
  return request.method === "GET" && request.url.split("?")[0] === "/v1/auth";
}
