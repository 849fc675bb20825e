import { ConveyorError } from "../src/errors.js";
import { deferredConnector } from "./deferred.js";
import { emailSpec } from "./email-spec.js";
import { ftpSpec, ftpsSpec } from "./ftp-spec.js";
import { httpSpec } from "./http-spec.js";
import { sftpSpec } from "./sftp-spec.js";
import { sds3Spec, sdsftpSpec } from "./storage-spec.js";
import type { EmailConnection } from "./email-parts.js";
import type { FtpConnection } from "./ftp-session.js";
import type { HttpConnection } from "./http-exchange.js";
import type { SftpConnection } from "./sftp-session.js";
import type { Capability, ConnectorSpec } from "./spec.js";
import type { ConnectionConfig, Connector, ConnectorContext, ConnectorParts, ConnectorSettings, OptionalOperation } from "./types.js";

// The registry: `connection.type` → its spec. The one place that names the
// types; validation, masking, secret registration and the pipeline look a
// type up here. Add a type with one line. A spec is declarations only; the
// connector itself (and its protocol library) loads when one is first used.

const BUILT_IN: readonly ConnectorSpec[] = [ftpSpec, ftpsSpec, sftpSpec, sdsftpSpec, sds3Spec, httpSpec, emailSpec];

let specs: ReadonlyMap<string, ConnectorSpec> = new Map(BUILT_IN.map((s) => [s.type, s]));

/** Every registered spec, in registration order (the order messages list the types in). */
export function connectorSpecs(): readonly ConnectorSpec[] {
  return [...specs.values()];
}

export function connectorSpec(type: unknown): ConnectorSpec | undefined {
  return typeof type === "string" ? specs.get(type) : undefined;
}

/**
 * Adds (or replaces) a type. Tests register a fake type with it to prove a
 * spec alone is enough; the returned function takes it out again. The map is
 * replaced, not changed, so a schema built from an earlier map is rebuilt.
 */
export function registerConnector(spec: ConnectorSpec): () => void {
  const before = specs;
  specs = new Map([...before, [spec.type, spec]]);
  return () => {
    specs = before;
  };
}

/** Whether a connection of `type` can do `capability`; an unknown type can do nothing. */
export function canDo(type: unknown, capability: Capability): boolean {
  return connectorSpec(type)?.capabilities.includes(capability) ?? false;
}

function refusal(spec: ConnectorSpec, what: OptionalOperation): ConveyorError {
  return new ConveyorError("protocol", `${what} is not supported for ${spec.label} connections`, spec.refusalHint ? { hint: spec.refusalHint } : {});
}

/**
 * A full Connector from what the factory built: each operation the spec does
 * not declare (or the connector leaves out) is refused with a protocol error.
 * The definition refuses such a connection up front; this is the backstop.
 * The connector itself is completed, so its methods keep their `this`.
 */
export function completeConnector(spec: ConnectorSpec, parts: ConnectorParts): Connector {
  const refuse = (what: OptionalOperation) => async (): Promise<never> => {
    throw refusal(spec, what);
  };
  // mkdir has no capability of its own: a connector that has folders has it.
  const lacks = (what: OptionalOperation): boolean => parts[what] === undefined || (what !== "mkdir" && !spec.capabilities.includes(what));
  if (lacks("delete")) parts.delete = refuse("delete");
  if (lacks("move")) parts.move = refuse("move");
  if (lacks("mkdir")) parts.mkdir = refuse("mkdir");
  return parts as Connector;
}

export function createConnector(connection: ConnectionConfig, context: ConnectorContext): Connector {
  const spec = connectorSpec(connection.type);
  if (!spec) {
    const known = [...specs.keys()].join(", ");
    throw new ConveyorError("definition_invalid", `connection.type "${String(connection.type)}" has no connector; allowed: ${known}`, {
      details: { field: "connection.type" },
    });
  }
  // Only the settings the spec names: the worker's own credentials and the rest never reach a connector.
  const settings: ConnectorSettings = {};
  for (const key of spec.settings) Object.assign(settings, { [key]: context.settings[key] });
  const own = { ...context, settings };
  if (spec.create) return completeConnector(spec, spec.create(connection, own));
  const { load } = spec;
  if (!load) throw new ConveyorError("internal", `the ${spec.label} connector spec has neither create nor load`);
  return deferredConnector(spec.type, async () => completeConnector(spec, (await load())(connection, own)), { sendsRecords: spec.capabilities.includes("send") });
}

/**
 * Every built-in type's keys together: what code reading a parsed automation
 * (the daemon, `conveyor show`, tests) may find in its connection. A
 * registered type's own keys read as unknown.
 */
export type BuiltInConnection = FtpConnection & SftpConnection & HttpConnection & EmailConnection;

export type { Capability, ConnectorSpec, RuleKit, SecretFields } from "./spec.js";
export type { Connector, ConnectorContext, ConnectorFactory, ConnectionConfig, ConnectorParts, ConnectorSettings } from "./types.js";
