import type { FastifyRequest } from "fastify";
import { HttpError } from "../http/envelopes.js";
import { findPrototypeKey, prototypeKeyMessage } from "../json-limits.js";
import { parseJsonBody } from "../http/body.js";

/** A file part of a multipart form, read whole (only routes that take files see one). */
export interface FormFile {
  filename: string;
  mimetype: string;
  content: Buffer;
}

export interface Form {
  /** Text fields; a `json=<JSON>` field is unwrapped into them. */
  fields: Record<string, unknown>;
  /** File parts by field name. */
  files: Record<string, FormFile>;
}

/** The largest file part a form route reads into memory (the seed does not say; a product image fits). */
export const MAX_FORM_FILE_BYTES = 16 * 1024 * 1024;

function unreadable(why: string): HttpError {
  return new HttpError(400, `the body could not be read: ${why}; send urlencoded fields, multipart/form-data, a JSON object, or one field json=<a JSON object>`);
}

/**
 * The official client posts a record as one form field `json=<the record as
 * JSON>`: its fields become the form's. Fields next to `json` are kept, and
 * the JSON's win where both name the same field (the wrapper is the record).
 */
export function unwrapJsonField(fields: Record<string, unknown>): Record<string, unknown> {
  const wrapped = fields.json;
  if (typeof wrapped !== "string") return fields;
  let parsed: unknown;
  try {
    parsed = parseJsonBody(wrapped);
  } catch {
    throw unreadable("the json field is not valid JSON");
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw unreadable("the json field must hold a JSON object of fields");
  const key = findPrototypeKey(parsed);
  if (key) throw new HttpError(400, prototypeKeyMessage("the json field", key));
  const rest = { ...fields };
  delete rest.json;
  return { ...rest, ...(parsed as Record<string, unknown>) };
}

async function rawText(request: FastifyRequest, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request.raw) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buf.length;
    if (size > limit) throw new HttpError(413, `the body is larger than the ${limit} bytes ${request.method} ${request.routeOptions.url ?? ""} accepts; send less at a time`);
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * A multipart content type without a boundary: the official client sets that
 * header by hand on plain POSTs whose body is urlencoded (or JSON), so the
 * body is read as what it is.
 */
function parseBoundaryless(body: string): Record<string, unknown> {
  const trimmed = body.trim();
  if (trimmed === "") return {};
  if (trimmed.startsWith("{")) {
    const parsed = parseJsonBody(trimmed);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  }
  if (trimmed.includes("--") && /\r?\nContent-Disposition:/i.test(trimmed)) {
    throw unreadable("the content type is multipart/form-data but names no boundary, and the body is multipart");
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of new URLSearchParams(trimmed)) out[k] = v;
  return out;
}

export interface FormOptions {
  /** Does the route take file parts (default: text fields only). */
  files?: boolean;
  /** What to tell a client who sent a file to a field of a text-only route, when the route knows better than "text only". */
  fileHint?: (field: string) => string | undefined;
}

function fileRefused(request: FastifyRequest, field: string, options: FormOptions): HttpError {
  const hint = options.fileHint?.(field);
  return new HttpError(400, `the form field ${field} is a file; ${request.method} ${request.url.split("?")[0]} takes text fields only${hint ? `: ${hint}` : ""}`);
}

async function readMultipart(request: FastifyRequest, options: FormOptions): Promise<Form> {
  const type = request.headers["content-type"] ?? "";
  if (!/boundary=/i.test(type)) {
    return { fields: parseBoundaryless(await rawText(request, request.routeOptions.bodyLimit)), files: {} };
  }
  const fields: Record<string, unknown> = {};
  const files: Record<string, FormFile> = {};
  try {
    for await (const part of request.parts({ limits: { fileSize: MAX_FORM_FILE_BYTES, files: 20, fields: 1000 } })) {
      if (part.type === "field") {
        fields[part.fieldname] = typeof part.value === "string" ? part.value : String(part.value);
        continue;
      }
      // Refused before it is read: a text-only route has no use for the bytes.
      if (options.files !== true) throw fileRefused(request, part.fieldname, options);
      const content = await part.toBuffer();
      files[part.fieldname] = { filename: part.filename, mimetype: part.mimetype, content };
    }
  } catch (err) {
    if (err instanceof HttpError) throw err;
    const code = (err as { code?: unknown }).code;
    if (code === "FST_PROTO_VIOLATION") throw err;
    if (code === "FST_REQ_FILE_TOO_LARGE") throw new HttpError(413, `a file of the form is larger than ${MAX_FORM_FILE_BYTES / 1024 / 1024} MB`);
    throw unreadable(`the multipart body is malformed (${(err as Error).message})`);
  }
  return { fields, files };
}

/**
 * Every v1 form route reads its body here, in any shape real clients send:
 * urlencoded, multipart (fields and, where the route takes them, files),
 * a JSON object, or any of these carrying one `json=<JSON>` field.
 */
export async function readForm(request: FastifyRequest, options: FormOptions = {}): Promise<Form> {
  if (request.isMultipart()) {
    const form = await readMultipart(request, options);
    return { fields: unwrapJsonField(form.fields), files: form.files };
  }
  const body: unknown = request.body;
  if (body === undefined || body === null || body === "") return { fields: {}, files: {} };
  if (typeof body !== "object" || Array.isArray(body)) throw unreadable("a JSON body must be an object of fields, not an array or a single value");
  return { fields: unwrapJsonField(body as Record<string, unknown>), files: {} };
}

/** The text fields alone, for the routes that take no files. */
export async function readFields(request: FastifyRequest, options: Omit<FormOptions, "files"> = {}): Promise<Record<string, unknown>> {
  return (await readForm(request, options)).fields;
}
