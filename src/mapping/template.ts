import { ConveyorError } from "../errors.js";
import type { MappedRecord } from "./types.js";

/**
 * Templates of `field_run` and `setValue`: literal text with `{{name}}` where
 * `name` is a field of the current record or a source column.
 *
 * Parameters (`<<name>>`, `{{name}}`) and the built-in run tokens (`{{DATE}}`,
 * `{{DATETIME}}`, `{{TIMESTAMP}}`, `{{RUN_ID}}`) were replaced when the
 * definition was resolved for the run, so what is left here are field names.
 * `NOW` is not a token: `"shipdate": "NOW"` is the literal word, which the
 * service's order API reads as the current time (seed part 2.3, shipments).
 */

/** Reads one named value for a template; `row` is the source row when there is one (imports). */
export type ValueReader<Row> = (record: MappedRecord, row: Row | undefined) => string | undefined;

/** Decides at compile time what `{{name}}` reads; null when the name means nothing (a definition error). */
export type NameResolver<Row> = (name: string) => ValueReader<Row> | null;

export interface Template<Row> {
  readonly source: string;
  /** Field and column names the template reads, in order of appearance. */
  readonly names: readonly string[];
  /** Set when the template has no placeholder: callers may skip evaluation. */
  readonly constant: string | undefined;
  evaluate(record: MappedRecord, row: Row | undefined): string;
}

type Part<Row> = string | ValueReader<Row>;

/** Splits `text` into literals and `{{name}}` names; scanning is done once, at compile time. */
export function templateNames(text: string): { literals: string[]; names: string[] } {
  const literals: string[] = [];
  const names: string[] = [];
  let from = 0;
  for (;;) {
    const open = text.indexOf("{{", from);
    const close = open < 0 ? -1 : text.indexOf("}}", open + 2);
    if (open < 0 || close < 0) {
      literals.push(text.slice(from));
      return { literals, names };
    }
    const name = text.slice(open + 2, close).trim();
    if (name === "") {
      literals.push(text.slice(from, close + 2));
      from = close + 2;
      continue;
    }
    literals.push(text.slice(from, open));
    names.push(name);
    from = close + 2;
  }
}

/**
 * Compiles a template. `where` names the definition key for errors
 * (`field_run.title`). A name the resolver does not know is a definition error,
 * not a blank written into every record.
 */
export function compileTemplate<Row>(text: string, resolve: NameResolver<Row>, where: string): Template<Row> {
  const { literals, names } = templateNames(text);
  if (names.length === 0) {
    return { source: text, names, constant: text, evaluate: () => text };
  }
  const parts: Part<Row>[] = [];
  const unknown: string[] = [];
  for (let i = 0; i < names.length; i++) {
    const literal = literals[i] ?? "";
    if (literal !== "") parts.push(literal);
    const name = names[i] ?? "";
    const reader = resolve(name);
    if (reader === null) unknown.push(name);
    else parts.push(reader);
  }
  const tail = literals[names.length] ?? "";
  if (tail !== "") parts.push(tail);
  if (unknown.length > 0) {
    throw new ConveyorError("placeholder_unknown", `${where}: ${unknown.map((n) => `{{${n}}}`).join(", ")} names no mapped field and no column of the file`, {
      details: { field: where, placeholders: unknown },
      hint: "In a template, {{name}} is a service field set by field_map or field_run, or a column of the file; check the spelling.",
    });
  }
  return { source: text, names, constant: undefined, evaluate: joinParts(parts) };
}

/** Specialized joins: the common one-placeholder template reads one value and allocates nothing else. */
function joinParts<Row>(parts: Part<Row>[]): (record: MappedRecord, row: Row | undefined) => string {
  const only = parts.length === 1 ? parts[0] : undefined;
  if (typeof only === "function") return (record, row) => only(record, row) ?? "";
  return (record, row) => {
    let out = "";
    for (const part of parts) out += typeof part === "string" ? part : (part(record, row) ?? "");
    return out;
  };
}

/** The reader of a record field. */
export function fieldReader<Row>(field: string): ValueReader<Row> {
  return (record) => record[field];
}
