import { integer, known, nonEmpty, text } from "../src/schema-kit.js";
import type { ConnectorSpec } from "./spec.js";
import { address, password, port, username } from "./spec-keys.js";

// email: an import reads attachments over IMAP (address: the host); an export sends over the worker's SMTP (address: recipients).

export const emailSpec: ConnectorSpec = {
  type: "email",
  label: "e-mail",
  keys: {
    address,
    username,
    password,
    port,
    folder: nonEmpty,
    email_search: known({ from: nonEmpty.optional(), subject: nonEmpty.optional(), since_days: integer(0).optional() }, "connection.email_search"),
    subject: text,
    body: text,
  },
  // An e-mail export sends through the worker's SMTP setting, so its port is not the automation's.
  importOnly: ["folder", "email_search", "port"],
  exportOnly: ["subject", "body"],
  addressList: "export",
  deferrable: { port: "number", "email_search.since_days": "number" },
  rules(_conn, action, kit) {
    kit.need("address", action === "export" ? "an e-mail export (the recipients)" : "an e-mail import (the IMAP host)");
  },
  defaults(conn, action) {
    if (action !== "import") return;
    conn.port ??= 993;
    conn.folder ??= "INBOX";
  },
  secrets: { fields: ["password"], urls: ["address"] },
  capabilities: ["list", "download", "upload"],
  settings: ["allowPrivateHosts", "smtpUrl"],
  refusalHint: "a processed message is marked seen and passed by the checkpoint; use after_import: keep",
  load: async () => (await import("./email.js")).emailConnectorFactory,
};
