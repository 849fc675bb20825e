import { ConveyorError } from "../src/errors.js";
import type { TransportOptions } from "./options.js";
import { storageSetting } from "./storage-paths.js";
import type { ConnectionConfig, Connector, ConnectorContext } from "./types.js";
import { LocalStorageConnector } from "./storage-local.js";
import { deferredConnector } from "./deferred.js";

// `sdsftp` and `sds3` are two names for one thing: the service's own storage.
// The seed exposed it over FTP and S3; here the worker's CONVEYOR_STORAGE
// setting alone decides where it lives (a local folder, an S3 bucket or an
// SFTP server), so an automation never carries storage hosts or credentials.

export function storageKind(storage: string): "local" | "s3" | "sftp" {
  if (storage.startsWith("s3://")) return "s3";
  if (storage.startsWith("sftp://")) return "sftp";
  return "local";
}

/** `options` reach the SFTP transport only (tests shorten its timeouts). */
export function createStorageConnector(connection: ConnectionConfig, context: ConnectorContext, options?: TransportOptions): Connector {
  const type = connection.type;
  if (type !== "sdsftp" && type !== "sds3") throw new ConveyorError("internal", `storage connector asked for type ${type}`);
  switch (storageKind(storageSetting(context.settings))) {
    // The AWS SDK and ssh2 load with the first operation, and only for the storage that needs them.
    case "s3":
      return deferredConnector(type, async () => new (await import("./storage-s3.js")).S3StorageConnector(type, connection, context));
    case "sftp":
      return deferredConnector(type, async () => (await import("./storage-sftp.js")).createSftpStorage(type, connection, context, options));
    default:
      return new LocalStorageConnector(type, connection, context);
  }
}
