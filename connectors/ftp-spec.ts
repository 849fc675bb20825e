import { flag } from "../src/schema-kit.js";
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

/** ftp upgrades to TLS with `ssl_ftp`; ftps is TLS by AUTH TLS or, with `implicit_tls`, from the first byte. */
function ftpFamily(type: "ftp" | "ftps", tlsKey: "ssl_ftp" | "implicit_tls"): ConnectorSpec {
  return {
    type,
    label: type,
    // validate: an ftp connection with ssl_ftp is TLS too, so it can skip certificate checks like ftps.
    keys: { ...LOGIN_KEYS, path, port, [tlsKey]: flag, use_pasv_address: flag, validate },
    deferrable: { port: "number", [tlsKey]: "boolean", use_pasv_address: "boolean", validate: "boolean" },
    rules: fileServerRules(type),
    defaults(conn) {
      conn.use_pasv_address ??= true;
      conn[tlsKey] ??= false;
      // Implicit TLS has its own port (automations.md: "implicit TLS (port 990)").
      conn.port ??= conn.implicit_tls === true ? 990 : 21;
      if (type === "ftps" || conn.ssl_ftp === true) conn.validate ??= true;
    },
    secrets: { fields: ["password"], urls: ["address"] },
    capabilities: FILE_CAPABILITIES,
    settings: ["allowPrivateHosts"],
    load: async () => (await import("./ftp.js")).createFtpConnector,
  };
}

export const ftpSpec = ftpFamily("ftp", "ssl_ftp");
export const ftpsSpec = ftpFamily("ftps", "implicit_tls");
