/**
 * A twig.js instance of our own (the package's factory, so no other user of
 * the module sees these changes) with what a partner's template may not do
 * taken out: reading other templates or files, loading anything over the
 * network, calling JavaScript methods of the values it is given.
 *
 * @module
 */

import type Twig from "twig";
import type { TwigCore, TwigExports, TwigFilter } from "twig";
import { lazyRequire } from "../lazy-require.js";
import { installFilters, type FilterSettings } from "./filters.js";
import { toInstant } from "./date-format.js";

// twig.js and locutus load with the first template: reading a definition without one, or a run without one, never needs them.
const twigModule = lazyRequire<typeof Twig>("twig");

/** Tags that read or define other templates: refused with a clear message before twig.js sees them. */
export const FORBIDDEN_TAGS = ["include", "embed", "endembed", "extends", "import", "from", "use", "source", "macro", "endmacro", "block", "endblock", "sandbox", "endsandbox"];

/** The functions a template may call; twig.js's others (source, include, template_from_string, attribute, block, parent, dump) are gone. */
export const ALLOWED_FUNCTIONS = ["range", "cycle", "date", "max", "min", "random"];

export interface Sandboxed {
  twig: TwigExports;
  core: TwigCore;
  /** Characters produced by the render in progress; `reset` before each render. */
  budget: { reset(): void };
}

export interface SandboxSettings extends FilterSettings {
  /** Characters one render may produce, counted as each tag's and loop pass's output is joined. */
  maxOutputChars?: number;
}

/** Lists a template may build at once: `range` and `batch` allocate them whole before a loop starts. */
const MAX_LIST = 1_000_000;

function refusedLoader(): never {
  throw new Error("templates cannot load other templates or files");
}

export function sandboxedTwig(settings: SandboxSettings): Sandboxed {
  const twig = twigModule().factory();
  twig.cache(false);
  let captured: TwigCore | null = null;
  let produced = 0;
  const maxChars = settings.maxOutputChars ?? Number.POSITIVE_INFINITY;
  twig.extend((core) => {
    captured = core;
    // The fs and ajax loaders would read files or URLs named in a template: replaced by one that refuses.
    for (const name of Object.keys(core.Templates.loaders)) {
      core.Templates.unRegisterLoader(name);
      core.Templates.registerLoader(name, refusedLoader);
    }
    for (const tag of Object.keys(core.logic.handler)) {
      const bare = tag.replace(/^Twig\.logic\.type\./, "").replace(/_$/, "");
      if (FORBIDDEN_TAGS.includes(bare) || bare === "shortblock") delete core.logic.handler[tag];
    }
    // A lookup through a prototype (`x.constructor`) would hand the template a JavaScript function to call.
    const resolve = core.expression.resolveAsync;
    core.expression.resolveAsync = function (this: unknown, value: unknown, ...rest: unknown[]) {
      if (typeof value === "function") throw new core.Error("templates read values only: calling a method of a value is not allowed");
      return resolve.call(this, value, ...(rest as [unknown]));
    };
    const functions: Record<string, (...args: unknown[]) => unknown> = Object.create(null) as Record<string, (...args: unknown[]) => unknown>;
    for (const name of ALLOWED_FUNCTIONS) {
      const fn = core.functions[name];
      if (fn) functions[name] = fn;
    }
    functions.date = (value: unknown) => toInstant(value, settings.timezone, settings.now());
    const range = functions.range;
    if (range) {
      functions.range = (low: unknown, high: unknown, step: unknown) => {
        const span = Math.abs(Number(high) - Number(low)) / Math.max(1, Math.abs(Number(step) || 1));
        if (!(span <= MAX_LIST)) throw new core.Error(`range() of more than ${MAX_LIST} values is not allowed`);
        return range(low, high, step);
      };
    }
    core.functions = functions;
    installFilters(core, settings);
    const batch = core.filters.batch;
    if (batch) {
      core.filters.batch = (value, params) => {
        if (!(Number(params?.[0]) <= MAX_LIST)) throw new core.Error(`batch() of more than ${MAX_LIST} values is not allowed`);
        return batch(value, params);
      };
    }
    // The text a render builds is counted where twig.js joins each part's output, so a runaway loop stops long before memory does.
    const output = core.output;
    core.output = function (this: unknown, parts: unknown[]) {
      const joined = output.call(this, parts);
      produced += String(joined).length;
      if (produced > maxChars) throw new core.Error(`the render produced more than ${maxChars} characters, the limit of one render`);
      return joined;
    };
    core.filters = Object.assign(Object.create(null) as Record<string, TwigFilter>, core.filters);
  });
  if (!captured) throw new Error("twig.js did not hand over its core");
  return { twig, core: captured, budget: { reset: () => (produced = 0) } };
}

/** The filter names a template may use: twig.js's own plus ours. */
export function filterNames(core: TwigCore): Set<string> {
  return new Set(Object.keys(core.filters));
}
