/**
 * The console's pages are rendered on the server from tagged templates: every
 * interpolated value is escaped unless it is already `Html`, so a definition's
 * name or a record's value can never become markup.
 *
 * @module
 */

/** Markup that is safe to put into a page as it is. */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c);
}

/** Markup written by us (never by a user): put in as it is. */
export function raw(markup: string): Html {
  return new Html(markup);
}

type Part = Html | string | number | boolean | null | undefined | readonly Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return "";
  if (part instanceof Html) return part.value;
  if (Array.isArray(part)) return (part as readonly Part[]).map(render).join("");
  return escapeHtml(String(part));
}

/** `html\`<td>${value}</td>\``: values escaped, `Html` and lists of it put in as they are; null, undefined and false render nothing. */
export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0] ?? "";
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? "");
  return new Html(out);
}
