/**
 * How the work database stores a scope record's values. A scope read's
 * records all have the export's columns in the export's order, so a record
 * with the first record's fields is stored as its cells alone, each led by
 * a unit separator (U+001F); any other record, or one holding that
 * character, is stored as JSON, which always starts with "{". Without the
 * field names repeated in every row, the scope table's inserts and lookups
 * handle far fewer bytes.
 *
 * @module
 */

const SEPARATOR = "\x1f";

export class ScopeValues {
  private fields: string[] | null = null;
  /**
   * A field named __proto__ would set the prototype of the decoded object
   * rather than a field of it, and a record of no fields would encode as
   * nothing: such records stay JSON.
   */
  private compact = true;

  encode(values: Record<string, string>): string {
    if (!this.fields) {
      this.fields = Object.keys(values);
      this.compact = this.fields.length > 0 && !this.fields.includes("__proto__");
    }
    const { fields } = this;
    if (!this.compact) return JSON.stringify(values);
    let text = "";
    let count = 0;
    for (const field in values) {
      const value = values[field] ?? "";
      if (field !== fields[count] || value.includes(SEPARATOR)) return JSON.stringify(values);
      text += SEPARATOR + value;
      count++;
    }
    return count === fields.length ? text : JSON.stringify(values);
  }

  decode(text: string): Record<string, string> {
    if (!text.startsWith(SEPARATOR)) return JSON.parse(text) as Record<string, string>;
    const cells = text.split(SEPARATOR);
    const values: Record<string, string> = {};
    const fields = this.fields ?? [];
    for (let i = 0; i < fields.length; i++) values[fields[i] ?? ""] = cells[i + 1] ?? "";
    return values;
  }
}
