import { flag } from "../src/schema-kit.js";
import { createFtpConnector } from "./ftp.js";
import type { ConnectorSpec, RuleKit } from "./spec.js";
import { LOGIN_KEYS, path, port, validate } from "./spec-keys.js";

// ftp and ftps: one implementation, two types (ftps is TLS from the start or by AUTH TLS; ftp may upgrade with ssl_ftp).

const FILE_CAPABILITIES = ["list", "download", "upload", "delete", "move"] as const;

/** What every server-folder type (ftp, ftps, sftp) requires. */
export function fileServerRules(type: string) {
  return (conn: Readonly<Record<string, unknown>>, _action: unknown, kit: RuleKit): void => {
    for (const key of ["address", "username", "path"]) kit.need(key, `an ${type} connection`);
    kit.need("password", conn.is_key_file === true ? "is_key_file: it holds the private key (PEM or OpenSSH)" : `an ${type} connection`);
  };
}

function passive(conn: Record<string, unknown>): void {
  conn.use_pasv_address ??= true;
}

export const ftpSpec: ConnectorSpec = {
  type: "ftp",
  label: "ftp",
  // validate: an ftp connection with ssl_ftp is TLS too, so it can skip certificate checks like ftps.
  keys: { ...LOGIN_KEYS, path, port, ssl_ftp: flag, use_pasv_address: flag, validate },
  rules: fileServerRules("ftp"),
  defaults(conn) {
    passive(conn);
    conn.ssl_ftp ??= false;
    conn.port ??= 21;
    if (conn.ssl_ftp === true) conn.validate ??= true;
  },
  secrets: { fields: ["password"], urls: ["address"] },
  capabilities: FILE_CAPABILITIES,
  create: createFtpConnector,
};

export const ftpsSpec: ConnectorSpec = {
  ...ftpSpec,
  type: "ftps",
  label: "ftps",
  keys: { ...LOGIN_KEYS, path, port, implicit_tls: flag, use_pasv_address: flag, validate },
  rules: fileServerRules("ftps"),
  defaults(conn) {
    passive(conn);
    conn.implicit_tls ??= false;
    // Implicit TLS has its own port (automations.md: "implicit TLS (port 990)").
    conn.port ??= conn.implicit_tls === true ? 990 : 21;
    conn.validate ??= true;
  },
};
