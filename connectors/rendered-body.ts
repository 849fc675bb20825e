/**
 * A request body a template rendered (an http export with `template` and
 * `payload_multi: 0`): sent as it is, where a plain record is sent as JSON.
 * Its content type is the connection's own `content-type` header when it has
 * one, else guessed from the first character.
 *
 * @module
 */

export class RenderedBody {
  constructor(readonly text: string) {}
}

export function contentTypeOfBody(text: string): string {
  const first = text.trimStart()[0];
  if (first === "{" || first === "[") return "application/json";
  if (first === "<") return "application/xml";
  return "text/plain; charset=utf-8";
}

/**
 * The body and the headers it brings. `headers` are the connection's: they are
 * added to every request anyway, so a content-type among them is left to them.
 */
export function requestBody(record: unknown, headers: Record<string, string> | undefined): { body: string; headers: Record<string, string> } {
  if (!(record instanceof RenderedBody)) return { body: JSON.stringify(record), headers: { "content-type": "application/json" } };
  const given = Object.keys(headers ?? {}).some((k) => k.toLowerCase() === "content-type");
  return { body: record.text, headers: given ? {} : { "content-type": contentTypeOfBody(record.text) } };
}
