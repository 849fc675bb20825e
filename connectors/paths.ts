import path from "node:path";
import { ConveyorError } from "../src/errors.js";

// Remote paths: everything a caller passes is relative to the connection's
// `path` and may never climb out of it. Names come from tenants' definitions
// and from remote listings, so `..`, absolute names and NUL are refused rather
// than cleaned: a silently rewritten path could overwrite the wrong file.

export function safeRelative(relative: string, field = "path"): string {
  if (relative.includes("\0")) throw unsafe(relative, field, "it contains a NUL character");
  const unified = relative.replace(/\\/g, "/");
  if (unified.startsWith("/") || /^[A-Za-z]:\//.test(unified)) throw unsafe(relative, field, "it is absolute");
  const parts: string[] = [];
  for (const part of unified.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") throw unsafe(relative, field, "it climbs out of the connection's path with ..");
    parts.push(part);
  }
  return parts.join("/");
}

function unsafe(value: string, field: string, why: string): ConveyorError {
  return new ConveyorError("unsafe_path", `remote ${field} "${value}" is refused: ${why}`, {
    hint: "Remote names are relative to connection.path and cannot leave it; use a plain relative name such as archive/file.csv.",
  });
}

/** The connection's base folder in POSIX form; `""`/`.` means the login folder. */
export function normalizeBase(base: string | undefined): string {
  const raw = (base ?? "").replace(/\\/g, "/").trim();
  if (raw === "" || raw === ".") return ".";
  const normal = path.posix.normalize(raw);
  return normal.length > 1 && normal.endsWith("/") ? normal.slice(0, -1) : normal;
}

/** `relative` under `base`, checked. An empty relative names the base itself. */
export function remoteJoin(base: string, relative: string, field = "path"): string {
  const rel = safeRelative(relative, field);
  if (rel === "") return base;
  return base === "." ? rel : path.posix.join(base, rel);
}

/** `a/b/c.csv` → `a/b` (relative), `c.csv` → `""`. */
export function relativeDir(relative: string): string {
  const dir = path.posix.dirname(relative);
  return dir === "." ? "" : dir;
}

/** Join two relative parts without a leading slash. */
export function relativeJoin(dir: string, name: string): string {
  return dir === "" ? name : `${dir}/${name}`;
}

/** The temporary name an upload is written under, in the same folder so the rename is atomic. */
export function partName(relative: string): string {
  return relativeJoin(relativeDir(relative), `.${path.posix.basename(relative)}.part`);
}

/** `stock.csv` → `stock-20240131-235959.csv`, for a move whose target exists. */
export function timestampedName(name: string, now: number): string {
  const d = new Date(now);
  const two = (n: number): string => String(n).padStart(2, "0");
  const stamp = `${d.getUTCFullYear()}${two(d.getUTCMonth() + 1)}${two(d.getUTCDate())}-${two(d.getUTCHours())}${two(d.getUTCMinutes())}${two(d.getUTCSeconds())}`;
  const ext = path.posix.extname(name);
  const stem = ext && ext !== name ? name.slice(0, -ext.length) : name;
  return `${stem}-${stamp}${ext && ext !== name ? ext : ""}`;
}
