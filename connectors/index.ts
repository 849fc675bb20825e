import { ConveyorError } from "../src/errors.js";
import { createFtpConnector } from "./ftp.js";
import { createSftpConnector } from "./sftp.js";
import { createHttpConnector } from "./http.js";
import { emailConnectorFactory } from "./email.js";
import { createSdsftpConnector, createSds3Connector } from "./storage.js";
import type { ConnectionConfig, Connector, ConnectorContext, ConnectorFactory } from "./types.js";

/**
 * The one place that maps `connection.type` to its implementation; nothing
 * outside `connectors/` branches on the type. Add a type with one line.
 */
export const CONNECTORS: Partial<Record<ConnectionConfig["type"], ConnectorFactory>> = {
  ftp: createFtpConnector,
  ftps: createFtpConnector,
  sftp: createSftpConnector,
  http: createHttpConnector,
  email: emailConnectorFactory,
  sdsftp: createSdsftpConnector,
  sds3: createSds3Connector,
};

export function createConnector(connection: ConnectionConfig, context: ConnectorContext): Connector {
  const factory = CONNECTORS[connection.type];
  if (!factory) {
    const known = Object.keys(CONNECTORS).join(", ");
    throw new ConveyorError("definition_invalid", `connection.type "${String(connection.type)}" has no connector; allowed: ${known}`, {
      details: { field: "connection.type" },
    });
  }
  return factory(connection, context);
}

export type { Connector, ConnectorContext, ConnectorFactory, ConnectionConfig } from "./types.js";
