import { connectorSpec } from "../../connectors/index.js";
import { safeRelative } from "../../connectors/paths.js";
import { cleanRelative } from "../../connectors/storage-paths.js";
import { ConveyorError, isConveyorError } from "../errors.js";
import { describeProblem } from "./problems.js";
import { isEncrypted } from "./crypto.js";
import { hasPlaceholder, substitute } from "./placeholders.js";
import { isRecord } from "./schema-common.js";
import type { Problem } from "./types.js";

// Every path and name a definition makes (automations.md: connection `path`
// and `folder`, export file names, `after_import: move:<folder>`), judged by
// the very functions the connectors call when they use it, so a definition
// accepted here is never refused for its path later, after apply. Save and
// `conveyor check` judge the literals; run start judges the resolved values.

export interface PathProblem {
  path: (string | number)[];
  message: string;
  allowed: string;
}

type Kind = "name" | "folder" | "base" | "mailbox";

const ALLOWED: Record<Kind, string> = {
  name: "a file name relative to connection.path, without .., a leading / or control characters, e.g. stock-{{DATE}}.csv or out/stock.csv",
  folder: 'a folder relative to connection.path, without .., a leading / or control characters, e.g. "move:done"',
  base: "a folder inside the account's storage, without .. that climbs out, backslashes or control characters, e.g. feeds/supplier-a",
  mailbox: "a mailbox name without control characters, e.g. INBOX or Suppliers/Stock",
};

const NOT_SECRET: readonly unknown[] = [undefined, null, false, 0, "0", "false"];
// A placeholder stands for a value the run knows; probed as one plain character, it neither climbs, nor is absolute, nor empty.
const PROBE = "_";

function controlProblem(value: string): string | null {
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  const found = /[\u0000-\u001f\u007f]/.exec(value);
  if (!found) return null;
  const code = found[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, "0");
  return `"${JSON.stringify(value).slice(1, -1)}" is refused: it holds a control character (U+${code})`;
}

/** The connector's own verdict: the message of its unsafe_path error, or null. */
function verdict(rule: () => unknown): string | null {
  try {
    rule();
    return null;
  } catch (err) {
    if (isConveyorError(err) && err.code === "unsafe_path") return err.message;
    throw err;
  }
}

/**
 * What is wrong with one value of `kind` for a connection of `type`, or null.
 * A placeholder takes its parameter's value from `values` when the definition
 * gives one in clear, else it is judged as plain text.
 */
export function pathProblem(value: string, kind: Kind, type: unknown, values: ReadonlyMap<string, string> = new Map()): string | null {
  let used = false;
  const probe = hasPlaceholder(value)
    ? substitute(value, (ref) => {
        const given = values.get(ref.name);
        used ||= given !== undefined;
        return given ?? PROBE;
      })
    : value;
  const control = controlProblem(probe);
  if (control || kind === "mailbox") return control && probe !== value ? `${control} (from "${value}")` : control;
  const storage = connectorSpec(type)?.storage === true;
  let wrong: string | null = null;
  if (kind === "base") {
    // ftp and sftp folders are the server's own (absolute is normal); storage folders are the account's.
    wrong = storage ? verdict(() => cleanRelative(probe, "connection.path")) : null;
  } else {
    wrong = verdict(() => safeRelative(probe, kind === "name" ? "file name" : "folder"));
    if (!wrong && storage) wrong = verdict(() => cleanRelative(probe, kind === "name" ? "file name" : "move folder"));
    if (!wrong && kind === "name" && probe.split(/[\\/]/).some((part) => part.trim() === "")) {
      wrong = `file name "${probe}" is refused: it has an empty part (// or a trailing /), so it names no file`;
    }
  }
  if (!wrong || probe === value) return wrong;
  return wrong.split(`"${probe}"`).join(used ? `"${value}" (= "${probe}" with the parameters' values)` : `"${value}"`);
}

/** `move:done`, ` move: done `, or `{move: "done"}` → `done`; anything else has no folder. */
export function moveFolder(afterImport: unknown): string | undefined {
  if (typeof afterImport === "string") return /^move:(.*)$/s.exec(afterImport)?.[1]?.trim();
  return isRecord(afterImport) && typeof afterImport.move === "string" ? afterImport.move : undefined;
}

/** The parameters' values a definition gives in clear; an encrypted one is judged at run start only. */
function clearValues(parameters: unknown): Map<string, string> {
  const values = new Map<string, string>();
  const list = Array.isArray(parameters) ? parameters : isRecord(parameters) ? Object.entries(parameters).map(([name, value]) => ({ name, value })) : [];
  for (const p of list) {
    if (!isRecord(p) || typeof p.name !== "string" || !NOT_SECRET.includes(p.encrypted)) continue;
    // An empty value is one still to be given (at install, or with --param): not known yet.
    if ((typeof p.value === "string" && p.value !== "" && !isEncrypted(p.value)) || typeof p.value === "number") values.set(p.name, String(p.value));
  }
  return values;
}

/**
 * Every path problem of a definition, raw (as saved) or resolved (at run start):
 * both have the same keys, and an after_import of either spelling is read.
 */
export function definitionPathProblems(top: Record<string, unknown>): PathProblem[] {
  const problems: PathProblem[] = [];
  const conn = isRecord(top.connection) ? top.connection : {};
  const values = clearValues(top.parameters);
  const check = (value: unknown, kind: Kind, path: (string | number)[]): void => {
    if (typeof value !== "string") return;
    const wrong = pathProblem(value, kind, conn.type, values);
    if (wrong) problems.push({ path, message: wrong, allowed: ALLOWED[kind] });
  };
  check(conn.path, "base", ["connection", "path"]);
  check(conn.folder, "mailbox", ["connection", "folder"]);
  if (Array.isArray(top.file_configs)) {
    top.file_configs.forEach((fc: unknown, i) => {
      if (!isRecord(fc)) return;
      if (top.action === "export") check(fc.name, "name", ["file_configs", i, "name"]);
      check(moveFolder(fc.after_import), "folder", ["file_configs", i, "after_import"]);
    });
  }
  return problems;
}

/** The run-start refusal: every problem with its field path, the first unsafe field in `details.field`. */
export function unsafePathError(where: string, problems: Problem[]): ConveyorError {
  const lines = problems.map((p) => `  ${describeProblem(p)}`).join("\n");
  return new ConveyorError("unsafe_path", `${where}: refused before any connection opened, ${problems.length} problem${problems.length === 1 ? "" : "s"}:\n${lines}`, {
    details: { field: problems[0]?.path ?? "", problems },
    hint: "paths and names stay inside connection.path: fix the parameter value (or the --param given) so the field names a relative place without ..",
  });
}
