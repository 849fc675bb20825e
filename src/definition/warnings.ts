import { isSecretHeader, isSecretParam } from "../secrets.js";
import { connectorSpecs, connectorSpec } from "../../connectors/index.js";
import { mappedFields } from "../mapping/index.js";
import { DEFAULT_CHANGE_LIMITS } from "./change-limits.js";
import { hasPlaceholder } from "./placeholders.js";
import { isRecord } from "./schema-common.js";
import { formatPath } from "./problems.js";
import type { Automation, Problem } from "./types.js";

const CLEAR_HINT = "a placeholder of a parameter marked encrypted, e.g. <<api key>> with {name: \"api key\", encrypted: true}";

/**
 * Credentials written into the definition itself: stored and shown as
 * written, unlike an encrypted parameter. Only for a definition as written:
 * once resolved, every placeholder reads as a literal.
 */
export function clearCredentials(automation: Automation): Problem[] {
  const c = automation.connection;
  const out: Problem[] = [];
  for (const [i, address] of [c?.address ?? []].flat().entries()) {
    let url: URL;
    try {
      url = new URL(address);
    } catch {
      continue;
    }
    const path = Array.isArray(c?.address) ? `connection.address[${i}]` : "connection.address";
    const names = [...url.searchParams].filter(([k, v]) => isSecretParam(k) && v !== "" && !hasPlaceholder(v)).map(([k]) => k);
    if (url.password && !hasPlaceholder(decodeURIComponent(url.password))) names.unshift("the password before @");
    if (names.length) out.push({ path, message: `carries a credential in clear (${names.join(", ")}): it is stored and listed as written`, allowed: CLEAR_HINT });
  }
  // The header block is the one the connection type's spec names as holding credentials, and so is each listed block's (http triggers).
  const secrets = connectorSpec(c?.type)?.secrets;
  const blocks: Array<[unknown, string, string | undefined]> = [[c, "connection", secrets?.headers]];
  for (const [key, fields] of Object.entries(secrets?.lists ?? {})) {
    const list: unknown = c?.[key];
    if (Array.isArray(list)) list.forEach((block: unknown, i) => blocks.push([block, `connection.${key}[${i}]`, fields.headers]));
  }
  for (const [block, at, headersKey] of blocks) {
    const headers: unknown = headersKey && isRecord(block) ? block[headersKey] : undefined;
    for (const [name, value] of Object.entries(isRecord(headers) ? headers : {})) {
      if (isSecretHeader(name) && typeof value === "string" && value !== "" && !hasPlaceholder(value)) {
        out.push({ path: `${at}.${headersKey ?? ""}.${name}`, message: "holds a credential in clear: it is stored as written", allowed: CLEAR_HINT });
      }
    }
  }
  return out;
}

/** The registered types as a sentence: "ftp, ftps, … http or email". */
function typeList(): string {
  const types = connectorSpecs().map((s) => s.type);
  const last = types.pop();
  return types.length ? `${types.join(", ")} or ${last ?? ""}` : (last ?? "");
}

/**
 * What a valid definition does that its author may not mean: said by
 * `conveyor check` and logged by each run, never refused.
 */
export function definitionWarnings(automation: Automation): Problem[] {
  const warnings: Problem[] = [];
  if (!automation.connection) {
    // automations.md: `connection` is required "except for a run fed by a local file".
    warnings.push({
      path: "connection",
      message: automation.action === "import" ? "no connection: only conveyor run --file can feed this import, and its scheduled runs fail" : "no connection: a live run has nowhere to deliver the file",
      allowed: `a connection of type ${typeList()}`,
    });
  }
  // The connection type's own: an http trigger whose value nothing uses.
  const conn: Record<string, unknown> | undefined = automation.connection ? { ...automation.connection } : undefined;
  if (conn) connectorSpec(conn.type)?.warnings?.(conn, (path, message, allowed) => warnings.push({ path: formatPath(path), message, ...(allowed ? { allowed } : {}) }));
  if (automation.action === "export" && automation.type === "orders") {
    for (const [i, config] of automation.file_configs.entries()) {
      if ((config.search ?? "").trim() !== "") continue;
      // automations.md, `search`: an order export without one re-sends every order.
      warnings.push({
        path: `file_configs[${i}].search`,
        message: "no search: every order is exported on every run",
        allowed: 'a search that narrows the orders, e.g. status:=READY archived:=0, or date:>"-1 day"',
      });
    }
  }
  warnings.push(...unmappedChangeLimits(automation));
  return warnings;
}

/** A limit on a field the file config never sets weighs nothing: most likely a misspelt field. */
function unmappedChangeLimits(automation: Automation): Problem[] {
  const out: Problem[] = [];
  for (const [i, config] of automation.file_configs.entries()) {
    const fields = Object.keys(config.change_limits ?? {}).filter((f) => !(f in DEFAULT_CHANGE_LIMITS));
    if (fields.length === 0) continue;
    const mapped = mappedFields(config).filter((f) => f !== config.identifier);
    for (const field of fields) {
      if (mapped.includes(field)) continue;
      out.push({ path: formatPath(["file_configs", i, "change_limits", field]), message: `"${field}" is not set by this file config, so its limits never apply`, allowed: `a field the file config maps: ${mapped.join(", ")}` });
    }
  }
  return out;
}
