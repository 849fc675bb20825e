import { z } from "zod";
import { pointerRulesSchema } from "../src/pointers/rules.js";
import { flag, known, nonEmpty, oneOf, text } from "../src/schema-kit.js";
import type { ConnectorSpec } from "./spec.js";
import { address, password, username, validate } from "./spec-keys.js";
import { RUNTIME_PLACEHOLDER } from "./http-refs.js";
import { triggerConnectionRules, triggerSchema, triggerWarnings } from "./http-trigger-spec.js";

// http: an import downloads one URL (pages joined when paginate is set); an export sends the file, or one request per record.

export const HTTP_METHODS = ["GET", "POST", "PUT", "PATCH"] as const;

/* A header the connector sends is refused here when HTTP would refuse it on the wire: a line break in it could start a header of the tenant's own. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const headerValue = text.refine((v) => !/[\r\n\0]/.test(v), "a header value holds no line break (CR, LF) or NUL character");

const headers = z.record(z.string(), headerValue).superRefine((headers, ctx) => {
  for (const name of Object.keys(headers)) if (!HEADER_NAME.test(name)) ctx.addIssue({ code: "custom", path: [name], message: `${JSON.stringify(name)} is not a header name: letters, digits and !#$%&'*+-.^_\`|~ only (no spaces, colons or line breaks)` });
});

const keys = {
  address,
  username,
  password,
  validate,
  method: z
    .string()
    .transform((m) => m.toUpperCase())
    .pipe(oneOf(HTTP_METHODS)),
  headers,
  payload: z.record(z.string(), z.unknown()),
  login_address: nonEmpty,
  oauth: known({ address: nonEmpty, client_id: nonEmpty, client_secret: nonEmpty, grant_type: nonEmpty.optional(), method: nonEmpty.optional() }, "connection.oauth"),
  paginate: flag,
  pagination: known({ next: nonEmpty, param: nonEmpty.optional(), records: nonEmpty.optional() }, "connection.pagination"),
  // Our extension (README, "HTTP request sequences"): requests run before the final one, each yielding {{trigger_valueN}}.
  triggers: z.array(triggerSchema(headers, HTTP_METHODS)).max(20, { error: "at most 20 triggers" }),
  pointers: pointerRulesSchema,
};

export const httpSpec: ConnectorSpec = {
  type: "http",
  label: "http",
  keys,
  importOnly: ["paginate", "pagination", "pointers"],
  urlKeys: ["address", "login_address"],
  // method: checked against HTTP_METHODS once resolved (deferred-text.ts).
  deferrable: { validate: "boolean", paginate: "boolean", method: "text" },
  rules(conn, action, kit) {
    kit.need("address", "an http connection (the URL)");
    if (action === "import") kit.need("payload", "an http import (the parameters that trigger the download; {} for none)");
    triggerConnectionRules(conn, kit);
  },
  warnings: triggerWarnings,
  runtimePlaceholders: RUNTIME_PLACEHOLDER,
  defaults(conn) {
    conn.method ??= "POST";
    conn.validate ??= true;
    conn.paginate ??= false;
  },
  secrets: {
    fields: ["password", "oauth.client_secret"],
    headers: "headers",
    urls: ["address", "login_address", "oauth.address"],
    params: "payload",
    lists: { triggers: { fields: [], headers: "headers", urls: ["address"], params: "payload" } },
  },
  capabilities: ["list", "download", "upload", "send"],
  settings: ["allowPrivateHosts"],
  refusalHint: "http connections only download (import) or send (export); use after_import: keep",
  joinsPages: (conn) => conn.paginate === true,
  // The connector, with undici, the XML parser and JSONPath, loads with its first operation.
  load: async () => (await import("./http.js")).createHttpConnector,
};
