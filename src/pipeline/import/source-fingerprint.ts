/**
 * Source fingerprints (issue 28): what a snapshot entry was mapped from, so
 * that a diff run recognises an unchanged row by its text or its cells,
 * without mapping it, reading its stored values or comparing them.
 *
 * A fingerprint is the hash of the mapping's definition (the file config,
 * the file's header, Conveyor's version) followed by the
 * hash of the row's text (a regular CSV record) or of its raw cells (a
 * record papaparse read). Equal fingerprints mean equal mapped records
 * only where mapping is a function of the row alone: no `service_actions`
 * (they read the service's record), no condition on the clock, a CSV row of
 * text cells. Everywhere else there is no fingerprint and rows are mapped.
 *
 * @module
 */

import { hash } from "node:crypto";
import type { FileConfig } from "../../definition/index.js";
import { CsvRecord, type SourceRow } from "../../formats/index.js";
import type { BoundFieldMap } from "../../mapping/index.js";
import { parseSearch, usesClock } from "../../search/index.js";
import { packageVersion } from "../../version.js";

/**
 * Raised when the mapping code changes what a row maps to, or what a row's
 * hash is taken of, so that no older fingerprint is trusted (2: a regular
 * record's text, no longer only its cells).
 */
const SCHEME = 2;

/** Characters of the definition's hash at the front of every fingerprint (base64url: 72 bits). */
export const DEFINITION_CHARS = 12;

/** What a file's rows are fingerprinted by, once its header is checked. */
export interface SourceFingerprints {
  /** The identifier as the mapper will read it (trimmed), or undefined when the row has none. */
  identifier(row: SourceRow): string | undefined;
  /** The row's fingerprint, or undefined for a row that must be mapped (a parse problem, cells that are not text). */
  of(row: SourceRow): string | undefined;
}

/** Whether the mapped records of `config` depend on nothing but the row: then its rows can be fingerprinted. */
export function fingerprintable(config: FileConfig): boolean {
  if (config.service_actions.length > 0) return false;
  if (typeof config.field_map[config.identifier] !== "string") return false;
  return !config.vendor_actions.some((rule) => rule.search !== undefined && rule.search !== null && rule.search !== "" && usesClock(parseSearch(rule.search)));
}

/**
 * The fingerprints of one file's rows, or null when they would not tell an
 * unchanged record: the mapping depends on more than the row, or the format
 * does not give rows as text cells.
 */
export function sourceFingerprints(config: FileConfig, format: string, header: BoundFieldMap<SourceRow>): SourceFingerprints | null {
  if (format !== "csv" || !fingerprintable(config)) return null;
  const at = header.fields.indexOf(config.identifier);
  const read = header.getters[at];
  if (at < 0 || read === undefined) return null;
  // The whole file config, not a list of the keys mapping reads today: a key added later cannot be missed.
  const definition = (hashed: "text" | "cells"): string => hash("sha1", JSON.stringify([SCHEME, packageVersion(), config, header.columns, hashed]), "base64url").slice(0, DEFINITION_CHARS);
  // A record hashed by its text and the same record hashed by its cells (papaparse read it) differ in their
  // definition part: moving from one kind to the other is a new definition, and its fingerprint is stored
  // again, where a different hash under the same definition would say the cells changed.
  const byText = definition("text");
  const byCells = definition("cells");
  return {
    identifier: (row) => {
      const id = read(row)?.trim();
      return id === "" ? undefined : id;
    },
    of: (row) => {
      if (row.error !== undefined) return undefined;
      // A regular record's text stands for its cells, so it is hashed without cutting them out.
      if (row instanceof CsvRecord && row.text !== undefined) return byText + hash("sha1", row.text, "base64url");
      if (!Array.isArray(row.raw)) return undefined;
      const cells = row.raw as unknown[];
      // The lengths make the joined text stand for one list of cells only, whatever characters a cell holds.
      let lengths = "";
      for (const cell of cells) {
        if (typeof cell !== "string") return undefined;
        lengths += `${cell.length},`;
      }
      return byCells + hash("sha1", `${lengths}\u0000${cells.join("")}`, "base64url");
    },
  };
}
