import type { z } from "zod";
import type { Add } from "../src/schema-kit.js";
import type { ConnectionConfig, ConnectorContext, ConnectorFactory, ConnectorParts, ConnectorSettings } from "./types.js";

// What a connection type declares about itself, the way a Redpanda Connect
// component does: the keys it reads with their schema, its defaults, which
// keys hold secrets, what it can do and how to build it. Validation, masking,
// secret registration and the pipeline read this; nothing outside
// `connectors/` branches on the type.

/** What a connector can be asked to do; anything missing is refused before a run connects. */
export type Capability = "list" | "download" | "upload" | "delete" | "move" | "send";

export type Direction = "import" | "export";

/** Helpers the definition layer hands a spec's own rules, so a spec needs nothing from `src/definition/`. */
export interface RuleKit {
  /** Reports `connection.<key>` as required for `why` when it is empty. */
  need(key: string, why: string): void;
  add: Add;
  /** A text with no placeholder: a value that can be judged before the run resolves it. */
  plain(value: unknown): value is string;
}

/** Where a connection keeps its secrets; every kind is masked in listings and registered for masking at run start. */
export interface SecretFields {
  /** Keys (dot paths: `oauth.client_secret`) whose values are secret. */
  fields: readonly string[];
  /** A key holding a header map: headers with a credential-looking name are secret. */
  headers?: string;
  /** Keys (dot paths) holding URLs whose user-info and secret query values are secret. */
  urls?: readonly string[];
  /** A key holding request parameters: those with a credential-looking name are secret. */
  params?: string;
  /** Keys holding a list of blocks with secret fields of their own (http `triggers`: each has headers and a payload). */
  lists?: Readonly<Record<string, SecretFields>>;
}

export interface KeyFormat {
  pattern: RegExp;
  message: string;
  allowed: string;
}

export interface ConnectorSpec {
  /** The value of `connection.type`. */
  readonly type: string;
  /** How messages name the type ("e-mail" for email). */
  readonly label: string;
  /** Every connection key the type reads, with its schema; a key shared with another type has the same schema there. */
  readonly keys: Readonly<Record<string, z.ZodType>>;
  /** Keys read by imports only, and by exports only. */
  readonly importOnly?: readonly string[];
  readonly exportOnly?: readonly string[];
  /** `address` may be a list (of recipients) in this direction only. */
  readonly addressList?: Direction;
  /** Keys holding http(s) URLs: checked as written and again once parameters are resolved. */
  readonly urlKeys?: readonly string[];
  /**
   * Shapes a text key must have once written without a placeholder. Checked
   * whichever type the connection is, so a key set on the wrong type is told
   * both that it does not apply and what is wrong with it.
   */
  readonly formats?: Readonly<Record<string, KeyFormat>>;
  /**
   * Number, boolean and fixed-value keys that may be written as a whole
   * placeholder (`"port": "<<sftp port>>"`) and are checked once resolved.
   * A key of a nested block is named by its dot path (`email_search.since_days`).
   */
  readonly deferrable?: Readonly<Record<string, "number" | "boolean" | "text">>;
  /** Rules over several keys: what is required, which values are well-formed. */
  rules?(conn: Readonly<Record<string, unknown>>, action: unknown, kit: RuleKit): void;
  /** What a valid connection does that its author may not mean (`conveyor check` prints it; never refused). */
  warnings?(conn: Readonly<Record<string, unknown>>, add: Add): void;
  /**
   * Names of `{{…}}` placeholders the connector fills at request time (http:
   * `trigger_value2`, `pointer.since`): parsing and resolution leave them in
   * the connection's strings as written.
   */
  readonly runtimePlaceholders?: RegExp;
  /** Sets the spec's defaults on a connection holding only this type's non-empty keys. */
  defaults?(conn: Record<string, unknown>, action: Direction): void;
  readonly secrets: SecretFields;
  /** The worker settings the connector reads; the registry hands it these alone. */
  readonly settings: readonly (keyof ConnectorSettings)[];
  readonly capabilities: readonly Capability[];
  /** Why what the type cannot do is refused, shown as the hint. */
  readonly refusalHint?: string;
  /** Paths are the account's own storage: relative, and never climbing out of it. */
  readonly storage?: boolean;
  /** An http-style feed: pages are joined into one JSON array already, so a file config's `root` does not apply. */
  readonly joinsPages?: (conn: ConnectionConfig) => boolean;
  /** The port a listing shows when the connection has none (seed 2.2 lists every connection key). */
  readonly listedPort?: number;
  /** Builds the connector; the registry fills in a refusal for each capability it lacks. A spec has this or `load`. */
  create?(connection: ConnectionConfig, context: ConnectorContext): ConnectorParts;
  /**
   * The factory in a module of its own, loaded with the first operation of a
   * connector of this type (see deferred.ts): validating, masking and listing
   * a type never load its library.
   */
  load?(): Promise<ConnectorFactory>;
}
