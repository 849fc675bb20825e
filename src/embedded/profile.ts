import type { FastifyInstance, FastifyRequest } from "fastify";
import type { ServiceContext } from "./context.js";
import { HttpError, text, unixTime, v1Failure } from "../http/envelopes.js";
import { readFields } from "./form.js";
import type { AuthUsers } from "./auth.js";
import { ADMIN_ROLES, MANAGING_ROLES, OWNER_UID, ROLES, UserStore, type Role, type User } from "./user-store.js";

/** Columns a profile never shows nor takes (v1 part 4.8): identifiers, credentials and channel account ids. */
const SENSITIVE = new Set(["uid", "uaid", "token", "secret", "cycle", "openid", "notes", "password", "pass", "userid", "userpk", "username", "amznid", "ebayid", "channel_accounts"]);
/** What only owner and admin may change: the rest is stripped for other callers. */
const ADMIN_ONLY = ["role", "access", "token"];
const USERNAME = /^[A-Za-z0-9_.@-]{3,64}$/;

function view(user: User): Record<string, unknown> {
  return { result: "success", ...user.fields, userid: OWNER_UID, userpk: user.userpk, username: user.username, role: user.role, status: "active", time: unixTime() };
}

/**
 * Applies a profile update to `target` as `caller` may make it; answers the
 * fields it stripped (named in the answer, so nothing is dropped silently)
 * and a new token when one was asked for and allowed.
 */
function update(users: UserStore, caller: User, target: User, body: Record<string, unknown>): { ignored: string[]; token?: string } {
  const ignored: string[] = [];
  const admin = ADMIN_ROLES.includes(caller.role);
  const next: User = { ...target, fields: { ...target.fields } };
  let token: string | undefined;
  for (const [key, raw] of Object.entries(body)) {
    const value = text(raw) ?? "";
    const k = key.toLowerCase();
    if (ADMIN_ONLY.includes(k) && !admin) {
      ignored.push(key);
    } else if (k === "role") {
      if (target.userpk === 0) throw new HttpError(400, "role of the owner cannot change: the owner is always owner");
      if (!(ROLES as readonly string[]).includes(value) || value === "owner") throw new HttpError(400, `role must be one of ${ROLES.filter((r) => r !== "owner").join(", ")}, not ${JSON.stringify(value)}`);
      next.role = value as Role;
    } else if (k === "token") {
      if (target.userpk === 0) throw new HttpError(400, "token of the owner is the embedded service's API token; it is not regenerated here");
      if (["1", "true", "yes", "regenerate"].includes(value.toLowerCase())) token = "regenerate";
    } else if (SENSITIVE.has(k)) {
      ignored.push(key);
    } else {
      next.fields[key] = value;
    }
  }
  users.save(next);
  return { ignored, ...(token ? { token: users.regenerate(target.userpk) } : {}) };
}

/** What sign-in and `GET /v1/auth` know of the account's users (v1 part 5). */
export function authUsers(users: UserStore): AuthUsers {
  return {
    check: (user, token) => users.check(user, token) !== undefined,
    profile: (user) => view(users.byName(user) ?? users.owner()),
  };
}

/** v1 part 4.8: the caller's profile, updates with the role rules, sub-users. */
export function registerProfile(app: FastifyInstance, ctx: ServiceContext, users: UserStore): void {
  const caller = (request: FastifyRequest): User => users.byName(request.apiUser ?? "") ?? users.owner();

  app.get("/v1/profile", async (request) => view(caller(request)));

  const updateRoute = async (request: FastifyRequest<{ Params: { userpk?: string } }>): Promise<Record<string, unknown>> => {
    const me = caller(request);
    const body = await readFields(request);
    let target = me;
    const pk = request.params.userpk;
    // For roles that may not manage others the path value is ignored and the caller is updated (v1 part 4.8).
    if (pk !== undefined && MANAGING_ROLES.includes(me.role)) {
      if (!/^\d+$/.test(pk) || Number(pk) < 1) throw new HttpError(400, `userpk must be a sub-user's number, 1 or greater, not ${JSON.stringify(pk)}`);
      const found = users.get(Number(pk));
      if (!found) return v1Failure(`no sub-user with userpk ${pk}`, ctx.now());
      target = found;
    }
    const { ignored, token } = update(users, me, target, body);
    const updated = users.get(target.userpk) ?? target;
    return { ...view(updated), message: ignored.length ? `profile updated; not changed: ${ignored.join(", ")} (not allowed for role ${me.role})` : "profile updated", ignored, ...(token ? { token } : {}) };
  };
  app.post("/v1/profile/update", updateRoute);
  app.post<{ Params: { userpk?: string } }>("/v1/profile/update/:userpk", updateRoute);

  app.post("/v1/profile/add", async (request, reply) => {
    const me = caller(request);
    if (!ADMIN_ROLES.includes(me.role)) return reply.code(403).send(v1Failure("User is not allowed to add new users", ctx.now()));
    const body = await readFields(request);
    if (Object.keys(body).length === 0) throw new HttpError(400, "the body has no fields: send username and the new user's profile fields");
    const username = text(body.username) ?? "";
    if (!USERNAME.test(username)) throw new HttpError(400, `username must be 3 to 64 letters, digits, _ . @ or -, not ${JSON.stringify(username)}`);
    if (users.byName(username)) throw new HttpError(400, `username ${JSON.stringify(username)} is taken`);
    const fields: Record<string, string> = {};
    for (const [k, v] of Object.entries(body)) if (!SENSITIVE.has(k.toLowerCase()) && !ADMIN_ONLY.includes(k.toLowerCase())) fields[k] = text(v) ?? "";
    const { user, token } = users.add(username, fields);
    // The token is shown once, here: the sandbox has no other place to read it.
    return { ...view(user), message: `sub-user ${username} added with role user`, token };
  });

  app.post("/v1/profile/username", async (request) => {
    const me = caller(request);
    const body = { ...(request.query as Record<string, unknown>), ...(await readFields(request)) };
    const username = text(body.username) ?? "";
    if (!USERNAME.test(username)) throw new HttpError(400, `username must be 3 to 64 letters, digits, _ . @ or -, not ${JSON.stringify(username)}`);
    if (me.userpk === 0) throw new HttpError(400, "the owner's username is the embedded service's API user; change it in the service settings, not here");
    if (users.byName(username)) throw new HttpError(400, `username ${JSON.stringify(username)} is taken`);
    users.save({ ...me, username });
    return { ...view({ ...me, username }), message: `renamed to ${username}` };
  });

  const platformOnly = async (_request: FastifyRequest, reply: import("fastify").FastifyReply): Promise<unknown> =>
    reply.code(403).send(v1Failure("platform administrators only: the sandbox has no platform administrator", ctx.now()));
  app.get("/v1/profile/users", platformOnly);
  app.post("/v1/profile/manage/*", platformOnly);
}
