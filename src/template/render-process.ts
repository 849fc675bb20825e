/**
 * The render process: twig.js renders synchronously, so a template that loops
 * forever or builds a huge text would hold the run's event loop. Here it holds
 * only this child process, which the renderer's watchdog kills, and whose heap
 * is capped (--max-old-space-size), so a runaway render dies alone. A worker
 * thread's resourceLimits were tried first: V8 aborted the whole process when
 * one large allocation crossed the thread's limit.
 *
 * @module
 */

import type { TwigTemplate } from "twig";
import { sandboxedTwig } from "./sandbox.js";
import type { RenderReply, RenderRequest, RenderSetup } from "./protocol.js";

function send(reply: RenderReply): void {
  process.send?.(reply);
}

// The first message is the setup; every later one a request.
const setup = await new Promise<RenderSetup>((resolve) => process.once("message", (m: RenderSetup) => resolve(m)));
// Orphaned (the run's process died): nothing left to render for.
process.on("disconnect", () => process.exit(0));
const { twig, budget } = sandboxedTwig({ timezone: setup.timezone, now: () => new Date(setup.nowMs), maxOutputChars: setup.maxOutputChars });

function compile(source: string): TwigTemplate {
  return twig.twig({ data: source, rethrow: true });
}

let whole: TwigTemplate | null = null;
let parts: { head: TwigTemplate; body: TwigTemplate; tail: TwigTemplate } | null = null;
let broken: string | null = null;
try {
  whole = compile(setup.source);
  parts = setup.parts ? { head: compile(setup.parts.head), body: compile(setup.parts.body), tail: compile(setup.parts.tail) } : null;
} catch (err) {
  broken = `the template does not compile: ${(err instanceof Error ? err.message : String(err)).replace(/^TwigException: /, "")}`;
}

function render(template: TwigTemplate, values: Record<string, unknown>): string {
  budget.reset();
  return checked(template.render(context(values)));
}

/** Null-prototype contexts: a template reaches only what is put here. */
function context(values: Record<string, unknown>): Record<string, unknown> {
  return Object.assign(Object.create(null) as Record<string, unknown>, { params: setup.params }, values);
}

function checked(text: string): string {
  if (text.length > setup.maxOutputChars) throw new Error(`one render gave ${text.length} characters, more than the limit of ${setup.maxOutputChars}`);
  return text;
}

function handle(req: RenderRequest): RenderReply {
  if (broken !== null || !whole) throw new Error(broken ?? "the template did not compile");
  const template = whole;
  switch (req.op) {
    case "whole":
      return { ok: true, texts: [render(template, { data: req.data })] };
    case "each":
      return { ok: true, texts: req.records.map((data) => render(template, { data })) };
    case "head":
    case "tail": {
      if (!parts) throw new Error("the template is not streamed");
      return { ok: true, texts: [render(parts[req.op], {})] };
    }
    case "body": {
      if (!parts || !setup.parts) throw new Error("the template is not streamed");
      const { valueVar, keyVar } = setup.parts;
      const texts = req.records.map((record, i) => {
        const index0 = req.first + i;
        const last = req.last && i === req.records.length - 1;
        const values: Record<string, unknown> = { [valueVar]: record, loop: { index: index0 + 1, index0, first: index0 === 0, last } };
        if (keyVar) values[keyVar] = index0;
        return render(parts.body, values);
      });
      // One string per batch: the file wants the concatenation and the batch is bounded.
      return { ok: true, texts: [texts.join("")] };
    }
  }
}

process.on("message", (req: RenderRequest) => {
  let reply: RenderReply;
  try {
    reply = handle(req);
  } catch (err) {
    // twig.js prefixes its own errors with their class name, which says nothing to a user.
    reply = { ok: false, message: (err instanceof Error ? err.message : String(err)).replace(/^TwigException: /, "") };
  }
  send(reply);
});
send(broken === null ? { ok: true, texts: [] } : { ok: false, message: broken });
