import { z } from "zod";
import { checkHttpUrl } from "./checks.js";
import { hasPlaceholder } from "./placeholders.js";
import { flag, integer, known, nonEmpty, oneOf, text, type Add } from "./schema-common.js";
import { CONNECTION_TYPES, type Connection, type ConnectionType } from "./types.js";

const FILE_TYPES: readonly ConnectionType[] = ["ftp", "ftps", "sftp"];

/* A header the connector sends is refused here when HTTP would refuse it on the wire: a line break in it could start a header of the tenant's own. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const headerValue = text.refine((v) => !/[\r\n\0]/.test(v), "a header value holds no line break (CR, LF) or NUL character");

/**
 * Which connection keys each type reads (automations.md, connection table).
 * A key set for a type that ignores it is refused: it is almost always a
 * misunderstanding (`ssl_ftp` on sftp, `port` on http) that would otherwise
 * silently do nothing.
 */
const APPLIES: Record<string, readonly ConnectionType[]> = {
  type: CONNECTION_TYPES,
  address: ["ftp", "ftps", "sftp", "http", "email"],
  username: ["ftp", "ftps", "sftp", "http", "email"],
  password: ["ftp", "ftps", "sftp", "http", "email"],
  path: ["ftp", "ftps", "sftp", "sdsftp", "sds3"],
  port: ["ftp", "ftps", "sftp", "email"],
  ssl_ftp: ["ftp"],
  implicit_tls: ["ftps"],
  use_pasv_address: ["ftp", "ftps"],
  is_key_file: ["sftp"],
  passphrase: ["sftp"],
  host_key: ["sftp"],
  // An ftp connection with ssl_ftp is TLS too, so it can skip certificate checks like ftps.
  validate: ["http", "ftps", "ftp"],
  method: ["http"],
  headers: ["http"],
  payload: ["http"],
  login_address: ["http"],
  oauth: ["http"],
  paginate: ["http"],
  pagination: ["http"],
  folder: ["email"],
  email_search: ["email"],
  subject: ["email"],
  body: ["email"],
};
const EXPORT_ONLY = new Set(["subject", "body"]);

function importOnly(type: ConnectionType, key: string): boolean {
  // An e-mail export sends through the worker's SMTP setting, so its port is not the automation's.
  return ["folder", "email_search", "paginate", "pagination"].includes(key) || (type === "email" && key === "port");
}

export const HTTP_METHODS = ["GET", "POST", "PUT", "PATCH"] as const;

export const connectionSchema = known(
  {
    type: oneOf(CONNECTION_TYPES),
    address: z.union([nonEmpty, z.array(nonEmpty).min(1)], { error: "expected a text, or an array of texts (e-mail recipients)" }).optional(),
    username: text.optional(),
    password: text.optional(),
    path: text.optional(),
    port: integer(1, 65535).optional(),
    ssl_ftp: flag.optional(),
    implicit_tls: flag.optional(),
    use_pasv_address: flag.optional(),
    is_key_file: flag.optional(),
    passphrase: text.optional(),
    host_key: text.optional(),
    validate: flag.optional(),
    method: z
      .string()
      .transform((m) => m.toUpperCase())
      .pipe(oneOf(HTTP_METHODS))
      .optional(),
    headers: z
      .record(z.string(), headerValue)
      .superRefine((headers, ctx) => {
        for (const name of Object.keys(headers)) if (!HEADER_NAME.test(name)) ctx.addIssue({ code: "custom", path: [name], message: `${JSON.stringify(name)} is not a header name: letters, digits and !#$%&'*+-.^_\`|~ only (no spaces, colons or line breaks)` });
      })
      .optional(),
    payload: z.record(z.string(), z.unknown()).optional(),
    login_address: nonEmpty.optional(),
    oauth: known(
      { address: nonEmpty, client_id: nonEmpty, client_secret: nonEmpty, grant_type: nonEmpty.optional(), method: nonEmpty.optional() },
      "connection.oauth",
    ).optional(),
    paginate: flag.optional(),
    pagination: known({ next: nonEmpty, param: nonEmpty.optional(), records: nonEmpty.optional() }, "connection.pagination").optional(),
    folder: nonEmpty.optional(),
    email_search: known({ from: nonEmpty.optional(), subject: nonEmpty.optional(), since_days: integer(0).optional() }, "connection.email_search").optional(),
    subject: text.optional(),
    body: text.optional(),
  },
  "connection",
);

function isEmpty(value: unknown): boolean {
  return value === undefined || value === null || value === "";
}

/** Rules that need the connection type and the automation's action together. */
export function connectionRules(conn: Record<string, unknown>, action: unknown, add: Add): void {
  const type = conn.type;
  if (typeof type !== "string" || !(CONNECTION_TYPES as readonly string[]).includes(type)) return;
  const t = type as ConnectionType;
  for (const [key, value] of Object.entries(conn)) {
    // Own keys only: a key named toString or constructor must not find Object's method.
    const types = Object.hasOwn(APPLIES, key) ? APPLIES[key] : undefined;
    if (!types || isEmpty(value)) continue;
    if (!types.includes(t)) {
      add(["connection", key], `"${key}" does not apply to a ${t} connection`, `keys of ${t}: ${Object.keys(APPLIES).filter((k) => APPLIES[k]?.includes(t)).join(", ")}`);
    } else if (action === "export" && importOnly(t, key)) {
      add(["connection", key], `"${key}" applies to imports only`);
    } else if (action === "import" && EXPORT_ONLY.has(key)) {
      add(["connection", key], `"${key}" applies to e-mail exports only`);
    }
  }
  const need = (key: string, why: string): void => {
    if (isEmpty(conn[key])) add(["connection", key], `required for ${why}`);
  };
  if (FILE_TYPES.includes(t)) {
    for (const key of ["address", "username", "path"]) need(key, `an ${t} connection`);
    need("password", conn.is_key_file === true ? "is_key_file: it holds the private key (PEM or OpenSSH)" : `an ${t} connection`);
  }
  if (t === "sdsftp" || t === "sds3") need("path", `a ${t} connection (relative to the account's storage root)`);
  if (t === "http") {
    need("address", "an http connection (the URL)");
    if (action === "import") need("payload", "an http import (the parameters that trigger the download; {} for none)");
    for (const key of ["address", "login_address"]) {
      const value = conn[key];
      if (typeof value === "string" && !hasPlaceholder(value)) {
        const wrong = checkHttpUrl(value);
        if (wrong) add(["connection", key], wrong, "an http:// or https:// URL");
      }
    }
  }
  if (t === "email") need("address", action === "export" ? "an e-mail export (the recipients)" : "an e-mail import (the IMAP host)");
  if (Array.isArray(conn.address) && !(t === "email" && action === "export")) {
    add(["connection", "address"], "a list of addresses is only for e-mail export recipients", "one host name or URL");
  }
  const hostKey = conn.host_key;
  if (typeof hostKey === "string" && !hasPlaceholder(hostKey) && !/^SHA256:[A-Za-z0-9+/]{43}=?$/.test(hostKey)) {
    add(["connection", "host_key"], "not a SHA256 host key fingerprint", 'the fingerprint as OpenSSH prints it, "SHA256:" followed by 43 base64 characters');
  }
}

/** The spec's per-type defaults; only keys the type reads are set. */
export function normalizeConnection(conn: Record<string, unknown>, action: "import" | "export"): Connection {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(conn)) if (!isEmpty(value) && Object.hasOwn(APPLIES, key)) out[key] = value;
  const c = out as unknown as Connection;
  const t = c.type;
  if (t === "ftp" || t === "ftps") {
    c.use_pasv_address ??= true;
    if (t === "ftp") c.ssl_ftp ??= false;
    if (t === "ftps") c.implicit_tls ??= false;
    // Implicit TLS has its own port (automations.md: "implicit TLS (port 990)").
    c.port ??= c.implicit_tls === true ? 990 : 21;
    if (t === "ftps" || c.ssl_ftp) c.validate ??= true;
  } else if (t === "sftp") {
    c.port ??= 22;
    c.is_key_file ??= false;
  } else if (t === "http") {
    c.method ??= "POST";
    c.validate ??= true;
    c.paginate ??= false;
  } else if (t === "email" && action === "import") {
    c.port ??= 993;
    c.folder ??= "INBOX";
  }
  return c;
}
