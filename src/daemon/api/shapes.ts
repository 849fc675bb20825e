import { isEncrypted, maskAutomation, type Automation } from "../../definition/index.js";
import { isSecretHeader, MASK, maskDeep } from "../../secrets.js";
import type { AutomationStatus } from "../../state/index.js";
import type { PublishedAutomation } from "../catalogue.js";
import { connectionFiller, parameterList, textOf, truthyFlag } from "../definition-body.js";
import type { Effective } from "../definitions.js";
import { withPointers } from "./pointer-patch.js";

/**
 * The automation shapes of seed v3 part 2.2, built from the stored raw
 * definition (what the client wrote, so a GET can be edited and sent back)
 * and masked: passwords, encrypted parameters, and the parameters that feed a
 * secret field come back as `********`.
 */

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function maskEncrypted(value: unknown): unknown {
  if (typeof value === "string") return isEncrypted(value) ? MASK : value;
  if (Array.isArray(value)) return value.map(maskEncrypted);
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskEncrypted(v)]));
  return value;
}

/** Names of the parameters whose values must not be shown: encrypted ones and those feeding a password. */
function secretParameters(automation: Automation): Set<string> {
  return new Set(maskAutomation(automation).parameters.filter((p) => p.value === MASK).map((p) => p.name));
}

export function maskedParameters(raw: unknown, automation: Automation): Json[] {
  const secret = secretParameters(automation);
  return parameterList(raw).map((p) => {
    const hide = (secret.has(textOf(p.name)) || truthyFlag(p.encrypted)) && p.value !== null && p.value !== "" && p.value !== undefined;
    return maskEncrypted(maskDeep(hide ? { ...p, value: MASK } : p)) as Json;
  });
}

/** The connection with every key of the seed's listed shape, empty where unused (as the service lists it). */
export function maskedConnection(raw: unknown, automation: Automation): Json {
  const c = isObject(raw) ? raw : {};
  const type = typeof c.type === "string" ? c.type : "";
  const filler = connectionFiller(type);
  const out: Json = { ...filler, port: automation.connection?.port ?? filler.port, type, ...maskEncrypted(maskDeep(c)) as Json };
  for (const k of ["password", "passphrase"]) if (typeof c[k] === "string" && c[k] !== "") out[k] = MASK;
  if (isObject(out.oauth) && out.oauth.client_secret) out.oauth = { ...out.oauth, client_secret: MASK };
  if (isObject(out.headers)) out.headers = Object.fromEntries(Object.entries(out.headers).map(([k, v]) => [k, isSecretHeader(k) && v !== "" ? MASK : v]));
  return out;
}

function common(e: Effective): Json {
  const a = e.automation;
  // The seed's shape has a schedule text: "" for an automation that only events start. `events` is ours, shown when set.
  return { action: a.action, active: a.active, name: a.name, schedule: a.schedule ?? "", slug: e.stored.slug, type: a.type, user_id: e.stored.account, vendor: a.vendor ?? "", ...(a.events ? { events: a.events } : {}) };
}

function fileConfigs(raw: Json): unknown {
  return maskEncrypted(maskDeep(Array.isArray(raw.file_configs) ? raw.file_configs : []));
}

/** `pointers`: the automation's current pointers (pointer-patch.ts), shown in `metadata`. */
export function customListed(e: Effective, pointers: Record<string, string> | null = null): Json {
  const raw = e.raw;
  return {
    ...common(e),
    config: { connection: maskedConnection(raw.connection, e.automation), file_configs: fileConfigs(raw), parameters: maskedParameters(raw.parameters, e.automation) },
    connection: e.automation.connection?.type ?? "",
    created: e.stored.created,
    id: String(e.stored.id),
    last_modified: e.stored.lastModified,
    metadata: maskDeep(withPointers(e.automation.metadata, pointers)),
    shared: false,
    shared_id: null,
  };
}

/** The seed's fetched shape; an automation that keeps pointers also shows them, in `metadata` as the listing does. */
export function customFetched(e: Effective, pointers: Record<string, string> | null = null): Json {
  const { action, active, name, schedule, slug, type, user_id, vendor, events } = common(e);
  const shown = { action, active, connection: e.automation.connection?.type ?? "", ...(events ? { events } : {}), file_configs: fileConfigs(e.raw), id: String(e.stored.id), name, schedule, slug, type, user_id, vendor };
  return pointers === null ? shown : { ...shown, metadata: maskDeep(withPointers(e.automation.metadata, pointers)) };
}

/** Installed parameters: `encrypted` as a number, hidden ones left out, secret values masked. */
/** The seed's installed shape; an automation that keeps pointers also shows them, in `metadata`. */
export function installedShape(e: Effective, pointers: Record<string, string> | null = null): Json {
  const hidden = new Set(parameterList(e.published?.raw.parameters).filter((p) => truthyFlag(p.hidden_from_user)).map((p) => textOf(p.name)));
  const parameters = maskedParameters(e.raw.parameters, e.automation)
    .filter((p) => !hidden.has(textOf(p.name)))
    .map((p) => ({ description: typeof p.description === "string" ? p.description : "", encrypted: truthyFlag(p.encrypted) ? 1 : 0, name: textOf(p.name), value: p.value === undefined || p.value === null ? null : textOf(p.value) }));
  const shown = { ...common(e), created: e.stored.created, id: String(e.stored.id), last_modified: e.stored.lastModified, parameters, shared_id: e.stored.sharedId };
  return pointers === null ? shown : { ...shown, metadata: maskDeep(withPointers(e.automation.metadata, pointers)) };
}

export function publishedShape(p: PublishedAutomation): Json {
  const a = p.automation;
  // fromEntries defines each name as an own key, so a parameter called "__proto__" is listed, not made the prototype.
  const parameters: Json = Object.fromEntries(
    maskedParameters(p.raw.parameters, a).map((param) => {
      const hidden = truthyFlag(param.hidden_from_user);
      const shown = {
        description: typeof param.description === "string" ? param.description : "",
        encrypted: truthyFlag(param.encrypted) ? 1 : 0,
        hidden_from_user: hidden ? 1 : 0,
        value: hidden || param.value === undefined || param.value === null ? null : String(param.value),
      };
      return [String(param.name), shown];
    }),
  );
  return {
    action: a.action,
    active: a.active,
    connection: maskedConnection(p.raw.connection, a),
    description: a.description ?? "",
    file_configs: fileConfigs(p.raw),
    id: p.sharedId,
    logo: p.logo,
    name: a.name,
    parameters,
    readme: p.readme,
    schedule: a.schedule ?? "",
    ...(a.events ? { events: a.events } : {}),
    shared: true,
    shared_id: String(p.sharedId),
    slug: a.slug,
    type: a.type,
    user_id: "",
    vendor: a.vendor ?? "",
  };
}

/** Custom automations report whether a run started and finished (booleans); installed ones the timestamps (seed 2.2). */
export function statusShape(status: AutomationStatus, kind: "custom" | "installed"): Json {
  if (kind === "installed") return { ...status };
  return {
    ...status,
    last_run_start_debug: status.last_run_start_debug !== null,
    last_run_finish_debug: status.last_run_finish_debug !== null,
    last_run_start_prod: status.last_run_start_prod !== null,
    last_run_finish_prod: status.last_run_finish_prod !== null,
  };
}
