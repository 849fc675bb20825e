import { timingSafeEqual } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { HttpError, text } from "../http/envelopes.js";
import { html } from "./html.js";
import { barePage } from "./layout.js";
import { isConsolePath } from "./paths.js";

export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export const SESSION_COOKIE = "conveyor_session";

/** The console's security headers on every console answer, and no-store on pages (they hold account data). */
export function registerConsoleHeaders(app: FastifyInstance): void {
  app.addHook("onSend", async (request, reply, payload) => {
    if (!isConsolePath(request.url)) return payload;
    reply.header("Content-Security-Policy", CONTENT_SECURITY_POLICY);
    reply.header("X-Content-Type-Options", "nosniff");
    reply.header("Referrer-Policy", "same-origin");
    const type = String(reply.getHeader("Content-Type") ?? "");
    if (!type.startsWith("text/css") && !type.startsWith("text/javascript")) reply.header("Cache-Control", "no-store");
    return payload;
  });
}

/**
 * Form bodies for console paths only: the /v3 API keeps answering 415 to
 * them, as before. Repeated fields keep their last value.
 */
export function registerFormBodies(app: FastifyInstance): void {
  app.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "string" }, (request, body, done) => {
    if (!isConsolePath(request.url)) {
      done(new HttpError(415, "form bodies are taken only by the console's pages; the /v3 API takes JSON (Content-Type: application/json)"), undefined);
      return;
    }
    done(null, Object.fromEntries(new URLSearchParams(String(body))));
  });
}

export function cookieValue(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const at = part.indexOf("=");
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

export function sessionCookie(request: FastifyRequest, token: string, maxAgeSeconds: number): string {
  const secure = request.protocol === "https" ? "; Secure" : "";
  return `${SESSION_COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${maxAgeSeconds}${secure}`;
}

/**
 * Why a changing request is refused as coming from another site, or null. A
 * browser sends `Origin` on every POST; it must be this host. Without it,
 * `Sec-Fetch-Site: cross-site` is refused too (some privacy tools strip Origin).
 */
export function crossSiteReason(request: FastifyRequest): string | null {
  const origin = text(request.headers.origin);
  if (origin !== undefined) {
    let url: URL | null = null;
    try {
      url = new URL(origin);
    } catch {
      url = null;
    }
    const here = `${request.protocol}:`;
    if (!url || url.host !== request.host || url.protocol !== here) return `the request came from ${origin}, not from this console (${request.protocol}://${request.host})`;
    return null;
  }
  if (text(request.headers["sec-fetch-site"]) === "cross-site") return "the browser marked the request as sent from another site (Sec-Fetch-Site: cross-site)";
  return null;
}

/** The CSRF token sent with a form (`_csrf`) or a script call (`X-CSRF-Token`) matches the session's. */
export function csrfMatches(request: FastifyRequest, expected: string): boolean {
  const body = request.body !== null && typeof request.body === "object" ? (request.body as Record<string, unknown>) : {};
  const sent = text(request.headers["x-csrf-token"]) ?? text(body._csrf) ?? "";
  const a = Buffer.from(sent);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** A refusal a person reads: what happened, why, and what to do. */
export function refusalPage(reply: FastifyReply, status: number, title: string, why: string, next: { href: string; label: string } = { href: "/automations", label: "Back to the automations" }): FastifyReply {
  const sentence = why.charAt(0).toUpperCase() + why.slice(1);
  const body = html`<h1>${title}</h1><p role="alert">${sentence}</p><p><a href="${next.href}">${next.label}</a></p>`;
  return reply.code(status).type("text/html; charset=utf-8").send(barePage(title, body));
}
