import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import { requestRun } from "../daemon/api/run-request.js";
import { maskedParameters } from "../daemon/api/shapes.js";
import { parameterList, truthyFlag } from "../daemon/definition-body.js";
import type { Effective } from "../daemon/definitions.js";
import { MASK } from "../secrets.js";
import { HttpError } from "../http/envelopes.js";
import { toConveyorError } from "../errors.js";
import { parseKind, renderAutomation } from "./automation-page.js";
import { sessionOf, type ConsoleContext } from "./context.js";
import { requireSession } from "./session-routes.js";

const runForm = z.object({ _csrf: z.string().optional(), mode: z.enum(["debug", "diff", "live"]) }).strict();
const activeForm = z.object({ _csrf: z.string().optional(), active: z.enum(["0", "1"]) }).strict();
const parameterForm = z.object({ _csrf: z.string().optional(), value: z.string().max(65_536, "at most 64 KB") }).strict();

function target(request: FastifyRequest): { kind: "custom" | "installed"; id: number } | null {
  const params = request.params as Record<string, unknown>;
  const kind = parseKind(params.kind);
  const id = Number(params.id);
  return kind && Number.isInteger(id) && id > 0 ? { kind, id } : null;
}

function formProblem(error: z.ZodError, allowed: string): string {
  const issue = error.issues[0];
  const field = issue?.code === "unrecognized_keys" ? issue.keys.join(", ") : String(issue?.path[0] ?? "form");
  return `${field}: ${issue?.message ?? "not valid"}; this form sends ${allowed}.`;
}

/**
 * The automation page's buttons. Each goes through the code its API route
 * uses (the run request, the definition service's patch and setParameter),
 * then redirects (a reload does not repeat it); a refusal shows the page
 * again with the reason.
 */
export function registerAutomationActions(app: FastifyInstance, ctx: ConsoleContext): void {
  const base = "/automations/:kind/:id";

  app.get(base, { preHandler: requireSession }, async (request, reply) => renderAutomation(ctx, request, reply));

  // A run names its automation by key (the id as text); the page's address also needs its kind.
  app.get("/automations/:key", { preHandler: requireSession }, async (request, reply) => {
    const key = String((request.params as Record<string, unknown>).key);
    const stored = await ctx.definitions.byKey(key);
    if (!stored || stored.account !== sessionOf(request).account) return reply.code(404).type("text/plain; charset=utf-8").send(`no automation ${key} in this account`);
    return reply.redirect(`/automations/${stored.kind}/${stored.id}`, 302);
  });

  app.post(`${base}/run`, { preHandler: requireSession }, async (request, reply) => {
    const { account } = sessionOf(request);
    const t = target(request);
    if (!t) return renderAutomation(ctx, request, reply);
    const form = runForm.safeParse(request.body ?? {});
    if (!form.success) return renderAutomation(ctx, request, reply, formProblem(form.error, "mode: debug, diff or live"), 400);
    try {
      const stored = await ctx.definitions.own(account, t.kind, t.id);
      // A definition that no longer validates is refused here, as the API does, rather than queued to fail.
      ctx.definitions.effective(stored);
      const mode = form.data.mode;
      const { result } = await requestRun(ctx, {
        key: String(stored.id),
        account,
        flags: { debug: mode === "debug", diff: mode === "diff", force: false, notify: false },
        email: null,
        trigger: "manual",
      });
      return reply.redirect(`/runs/${encodeURIComponent(result.id)}`, 303);
    } catch (err) {
      const status = err instanceof HttpError ? err.statusCode : 400;
      return renderAutomation(ctx, request, reply, `The run was not started: ${toConveyorError(err).message}`, status);
    }
  });

  app.post(`${base}/active`, { preHandler: requireSession }, async (request, reply) => {
    const { account } = sessionOf(request);
    const t = target(request);
    if (!t) return renderAutomation(ctx, request, reply);
    const form = activeForm.safeParse(request.body ?? {});
    if (!form.success) return renderAutomation(ctx, request, reply, formProblem(form.error, "active: 1 or 0"), 400);
    const active = form.data.active === "1";
    try {
      if (t.kind === "custom") await ctx.definitions.patchCustom(account, t.id, { active });
      else await ctx.definitions.patchInstalled(account, t.id, { active });
      ctx.logger.info({ event: "automation_updated", automation: t.id, account, active, via: "console" }, "automation (de)activated in the console");
      return reply.redirect(`/automations/${t.kind}/${t.id}?done=${active ? "activated" : "deactivated"}`, 303);
    } catch (err) {
      return renderAutomation(ctx, request, reply, `Not changed: ${toConveyorError(err).message}`, 400);
    }
  });

  app.post(`${base}/parameters/:name`, { preHandler: requireSession }, async (request, reply) => {
    const { account } = sessionOf(request);
    const t = target(request);
    const name = String((request.params as Record<string, unknown>).name ?? "");
    if (!t) return renderAutomation(ctx, request, reply);
    const form = parameterForm.safeParse(request.body ?? {});
    if (!form.success) return renderAutomation(ctx, request, reply, formProblem(form.error, "value"), 400);
    try {
      const stored = await ctx.definitions.own(account, t.kind, t.id);
      const e = ctx.definitions.effective(stored);
      const encrypted = parameterList(e.raw.parameters).some((p) => p.name === name && truthyFlag(p.encrypted));
      const secret = encrypted || isSecretParameter(e, name);
      // A secret's field is always shown empty: empty means "keep", never "erase".
      if (secret && form.data.value === "") return reply.redirect(`/automations/${t.kind}/${t.id}?done=unchanged`, 303);
      await ctx.definitions.setParameter(account, t.kind, t.id, name, { value: form.data.value, encrypted });
      ctx.logger.info({ event: "parameter_updated", automation: t.id, account, parameter: name, via: "console" }, "parameter changed in the console");
      return reply.redirect(`/automations/${t.kind}/${t.id}?done=saved`, 303);
    } catch (err) {
      return renderAutomation(ctx, request, reply, `Parameter "${name}" not saved: ${toConveyorError(err).message}`, 400);
    }
  });
}

/** A parameter the API masks (encrypted, or feeding a password) is write-only here too. */
function isSecretParameter(e: Effective, name: string): boolean {
  return maskedParameters(e.raw.parameters, e.automation).some((p) => p.name === name && p.value === MASK);
}
