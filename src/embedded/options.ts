import type { FastifyInstance } from "fastify";
import type { ServiceContext } from "./context.js";
import { fields, HttpError, text, unixTime, v1Failure } from "../http/envelopes.js";
import { readFields } from "./form.js";
import { OPTION_NAME, OptionStore } from "./option-store.js";

/** A settings value as stored: text as given, anything structured as its JSON. */
function optionText(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value);
}

/** A plugin name of `POST /v1/imports/cancel`: what a channel plugin is called (ebay, amazon, shopify2…). */
const PLUGIN_NAME = /^[a-z][a-z0-9_-]{0,49}$/i;

/** The product-import settings a cancel resets (v1 part 4.6), by plugin. */
export function importResetOptions(plugin: string): Record<string, string> {
  return { [`${plugin}_import_limit`]: "0", [`${plugin}_import_enabled`]: "0", [`${plugin}_import_media`]: "0" };
}

/** v1 parts 4.4 (settings and options) and 4.6 (`POST /v1/imports/cancel`). */
export function registerOptions(app: FastifyInstance, ctx: ServiceContext): void {
  const options = new OptionStore(ctx.db);

  app.get("/v1/options/all", async () => ({ result: "success", options: options.all(), time: unixTime(ctx.now()) }));

  app.get<{ Params: { name: string } }>("/v1/options/:name", async (request, reply) => {
    const name = request.params.name;
    const value = options.get(name);
    if (value === undefined) return reply.code(404).send(v1Failure(`no option ${JSON.stringify(name)}; GET /v1/options/all lists the account's options`, ctx.now()));
    return { result: "success", option: name, value, time: unixTime(ctx.now()) };
  });

  app.post("/v1/settings", async (request) => {
    const body = await readFields(request);
    const names = Object.keys(body);
    if (names.length === 0) throw new HttpError(400, "the body has no fields: send the settings to change as name=value");
    const bad = names.filter((n) => !OPTION_NAME.test(n));
    if (bad.length) throw new HttpError(400, `setting name${bad.length > 1 ? "s" : ""} ${bad.map((n) => JSON.stringify(n)).join(", ")} not allowed: names are 1 to 100 letters, digits, _, . or -`);
    const values = Object.fromEntries(names.map((n) => [n, optionText(body[n])]));
    options.setMany(values);
    return { result: "success", message: `${names.length} setting${names.length > 1 ? "s" : ""} saved`, updated: names, time: unixTime(ctx.now()) };
  });

  // The seed leaves the body field unnamed: `plugin` (or `channel`), from a JSON body, a form or the query.
  app.post("/v1/imports/cancel", async (request) => {
    const body = { ...fields(request.query), ...(await readFields(request)) };
    const plugin = text(body.plugin) ?? text(body.channel);
    if (plugin === undefined || plugin.trim() === "") throw new HttpError(400, "name the channel plugin whose import to cancel: plugin=<name> (in a JSON body, a form or the query)");
    if (!PLUGIN_NAME.test(plugin)) throw new HttpError(400, `plugin must be a plugin name (a letter, then up to 49 letters, digits, _ or -), not ${JSON.stringify(plugin)}`);
    const reset = importResetOptions(plugin);
    options.setMany(reset);
    return { result: "success", message: `product import of ${plugin} canceled: import limit 0, import flags off`, plugin, options: reset, time: unixTime(ctx.now()) };
  });
}
