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

/**
 * The one account of the embedded service. `X-Auth-User` and `X-Auth-Token`
 * together are the credential (seed v3 part 5, v1 part 5); `X-Auth-Integration`
 * is only a partner name and never lets a request in. `GET /v1/auth` may name
 * the user with `?apiuser=` instead of the header (v1 part 5.3).
 */
export function registerAuth(app: FastifyInstance, account: Account, subUser: (user: string, token: string) => boolean = () => false): void {
  const valid = (user: string | undefined, token: string | undefined): boolean =>
    user !== undefined && token !== undefined && same(user, account.apiUser) && same(token, account.apiToken);

  app.addHook("onRequest", async (request, reply) => {
    if (reply.sent) return reply;
    if (request.routeOptions.config.public || request.method === "OPTIONS") return undefined;
    const token = text(request.headers["x-auth-token"]);
    let user = text(request.headers["x-auth-user"]);
    if (user === undefined && isAuthProfile(request)) user = text(fields(request.query).apiuser);
    if (valid(user, token) || (user !== undefined && token !== undefined && subUser(user, token))) {
      request.apiUser = user;
      return undefined;
    }
    const why = user === undefined || token === undefined ? "missing X-Auth-User or X-Auth-Token header" : "wrong API user or token";
    return sendError(request, reply, 401, `${why}: send both headers with the API user and token (X-Auth-Integration is not a credential)`);
  });

  const profile = (): Record<string, unknown> => ({
    result: "success",
    user: account.apiUser,
    username: account.apiUser,
    role: "owner",
    userid: "1",
    userpk: 0,
    time: unixTime(),
  });

  app.post("/v1/auth", { config: { public: true } }, async (request, reply) => {
    const body = await readFields(request);
    const user = text(body.user);
    const pass = text(body.pass);
    // The embedded account has no separate password: its API token is the password.
    if (!valid(user, pass)) return sendError(request, reply, 401, "wrong user or pass: the embedded service's password is its API token");
    return { ...profile(), token: account.apiToken };
  });

  app.get("/v1/auth", async () => profile());
}

function isAuthProfile(request: FastifyRequest): boolean {
  return request.method === "GET" && request.url.split("?")[0] === "/v1/auth";
}
