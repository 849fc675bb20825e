import { createStorageConnector } from "./storage.js";
import type { ConnectorSpec } from "./spec.js";
import { path } from "./spec-keys.js";

// sdsftp and sds3: the service's own storage, wherever CONVEYOR_STORAGE puts it; a connection names only a folder in it.

export const sdsftpSpec: ConnectorSpec = {
  type: "sdsftp",
  label: "sdsftp",
  keys: { path },
  rules(_conn, _action, kit) {
    kit.need("path", "a sdsftp connection (relative to the account's storage root)");
  },
  secrets: { fields: [] },
  capabilities: ["list", "download", "upload", "delete", "move"],
  // Where the storage lives; its hosts are the operator's, so the private-host guard does not apply.
  settings: ["storage"],
  storage: true,
  create: (connection, context) => createStorageConnector(connection, context),
};

export const sds3Spec: ConnectorSpec = {
  ...sdsftpSpec,
  type: "sds3",
  label: "sds3",
  rules(_conn, _action, kit) {
    kit.need("path", "a sds3 connection (relative to the account's storage root)");
  },
};
