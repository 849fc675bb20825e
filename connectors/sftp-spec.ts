import { flag, text } from "../src/schema-kit.js";
import { fileServerRules } from "./ftp-spec.js";
import type { ConnectorSpec } from "./spec.js";
import { LOGIN_KEYS, path, port } from "./spec-keys.js";

// sftp: a password, or with is_key_file a private key in `password` (and its passphrase); host_key pins the server.

const HOST_KEY = /^SHA256:[A-Za-z0-9+/]{43}=?$/;

export const sftpSpec: ConnectorSpec = {
  type: "sftp",
  label: "sftp",
  keys: { ...LOGIN_KEYS, path, port, is_key_file: flag, passphrase: text, host_key: text },
  deferrable: { port: "number", is_key_file: "boolean" },
  rules: fileServerRules("sftp"),
  formats: { host_key: { pattern: HOST_KEY, message: "not a SHA256 host key fingerprint", allowed: 'the fingerprint as OpenSSH prints it, "SHA256:" followed by 43 base64 characters' } },
  defaults(conn) {
    conn.port ??= 22;
    conn.is_key_file ??= false;
  },
  secrets: { fields: ["password", "passphrase"], urls: ["address"] },
  capabilities: ["list", "download", "upload", "delete", "move"],
  settings: ["allowPrivateHosts"],
  listedPort: 22,
  load: async () => (await import("./sftp.js")).createSftpConnector,
};
