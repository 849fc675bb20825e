import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { Throttle } from "../http/throttle.js";
import type { AccountStore } from "../daemon/accounts.js";
import type { ConsoleContext } from "./context.js";
import { html } from "./html.js";
import { barePage } from "./layout.js";
import { SessionStore } from "./session-store.js";
import { cookieValue, crossSiteReason, csrfMatches, refusalPage, SESSION_COOKIE, sessionCookie } from "./security.js";

declare module "fastify" {
  interface FastifyInstance {
    /** The console's sessions, for `requireSession` on routes registered in any scope. */
    consoleSessions: SessionStore;
  }
}

/** A failed sign-in answers no sooner than this, so a known user with a wrong token and an unknown user take the same time. */
const FAILED_SIGN_IN_MS = 400;

const signInForm = z.object({
  user: z.string().max(128, "at most 128 characters").default(""),
  token: z.string().max(1024, "at most 1024 characters").default(""),
  next: z.string().max(2048).optional(),
});

/** Only a local console path: a sign-in link must not be able to send the browser to another site. */
function safeNext(next: string | undefined): string {
  return next !== undefined && /^\/(?!\/)[^\\\s]*$/.test(next) && !next.startsWith("/sign-") ? next : "/automations";
}

function signInPage(reply: FastifyReply, status: number, next: string, user: string, message: string | null): FastifyReply {
  const body = html`<h1>Sign in</h1>
<p>Use an account's API user and token: the ones the daemon printed when it started, or one from <code>conveyor accounts add</code>.</p>
${message === null ? "" : html`<p class="error" role="alert" id="sign-in-error">${message}</p>`}
<form method="post" action="/sign-in" class="stack">
<input type="hidden" name="next" value="${next}">
<label for="user">API user</label>
<input id="user" name="user" autocomplete="username" required value="${user}"${message === null ? "" : html` aria-describedby="sign-in-error"`}>
<label for="token">API token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>`;
  return reply.code(status).type("text/html; charset=utf-8").send(barePage("Sign in", body));
}

/**
 * The session check every console page but sign-in runs first. A page asked
 * for without a session goes to the sign-in form; a POST must come from this
 * console's own pages (Origin) and carry the session's CSRF token, or it is
 * refused with 403 and a page that says why. Sets `request.consoleSession`.
 */
export async function requireSession(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
  const changing = request.method !== "GET" && request.method !== "HEAD";
  if (changing) {
    const cross = crossSiteReason(request);
    if (cross) return refusalPage(reply, 403, "Refused: sent from another site", `${cross}. Changes are only taken from the console's own pages; open the console and use its buttons.`);
  }
  const session = await request.server.consoleSessions.check(cookieValue(request, SESSION_COOKIE));
  if (!session) {
    if (!changing) return reply.redirect(`/sign-in?next=${encodeURIComponent(request.url)}`, 303);
    return refusalPage(reply, 401, "Signed out", "Your session ended (signed out, expired, or its account's token changed). Sign in again, then repeat the change.", { href: "/sign-in", label: "Sign in" });
  }
  if (changing && !csrfMatches(request, session.csrf)) {
    return refusalPage(reply, 403, "Refused: form out of date", "The form did not carry this session's CSRF token (field _csrf or header X-CSRF-Token). Reload the page and try again.");
  }
  request.consoleSession = session;
  return undefined;
}

/** `/sign-in` (form and check), `/sign-out`, and `/` that sends the browser to one of them. */
export function registerSessionRoutes(app: FastifyInstance, ctx: ConsoleContext, accounts: AccountStore): void {
  const attempts = new Throttle({ read: Number.MAX_SAFE_INTEGER, write: ctx.signInLimit ?? 20, options: Number.MAX_SAFE_INTEGER }, () => ctx.now().getTime());

  app.get("/", async (request, reply) => {
    const session = await app.consoleSessions.check(cookieValue(request, SESSION_COOKIE));
    return reply.redirect(session ? "/automations" : "/sign-in", 303);
  });

  app.get("/sign-in", async (request, reply) => {
    const next = safeNext(typeof (request.query as Record<string, unknown>).next === "string" ? String((request.query as Record<string, unknown>).next) : undefined);
    if (await app.consoleSessions.check(cookieValue(request, SESSION_COOKIE))) return reply.redirect(next, 303);
    return signInPage(reply, 200, next, "", null);
  });

  app.post("/sign-in", async (request, reply) => {
    const started = Date.now();
    const cross = crossSiteReason(request);
    if (cross) return refusalPage(reply, 403, "Refused: sent from another site", `${cross}. Sign in on the console's own page.`, { href: "/sign-in", label: "Sign in" });
    const allowed = attempts.take(`ip:${request.ip}`, "write");
    if (!allowed.allowed) {
      reply.header("Retry-After", String(Math.max(1, allowed.reset - Math.floor(ctx.now().getTime() / 1000))));
      return signInPage(reply, 429, "/automations", "", `Too many sign-in attempts from this address: at most ${allowed.limit} a minute. Wait a minute and try again.`);
    }
    const parsed = signInForm.safeParse(request.body ?? {});
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return signInPage(reply, 400, "/automations", "", `${String(issue?.path[0] ?? "form")}: ${issue?.message ?? "not valid"}; send the fields user and token.`);
    }
    const { user, token } = parsed.data;
    const next = safeNext(parsed.data.next);
    if (user !== "" && token !== "" && (await accounts.verify(user, token))) {
      const session = await app.consoleSessions.create(user, token);
      ctx.logger.info({ event: "console_sign_in", account: user, ip: request.ip }, "console sign-in");
      return reply.header("Set-Cookie", sessionCookie(request, session.token, session.maxAgeSeconds)).redirect(next, 303);
    }
    ctx.logger.warn({ event: "console_sign_in_failed", ip: request.ip }, "console sign-in refused");
    const wait = FAILED_SIGN_IN_MS - (Date.now() - started);
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    return signInPage(reply, 401, next, user, "Wrong API user or token. Check both and try again.");
  });

  app.post("/sign-out", { preHandler: requireSession }, async (request, reply) => {
    await app.consoleSessions.end(cookieValue(request, SESSION_COOKIE));
    return reply.header("Set-Cookie", sessionCookie(request, "", 0)).redirect("/sign-in", 303);
  });
}

export { SessionStore };
