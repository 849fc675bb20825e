import path from "node:path";
import { ConveyorError } from "../src/errors.js";
import type { ConnectorSettings } from "./types.js";

// Relative paths inside the service's storage. Everything a tenant writes
// (the connection's `path`, folders, file names) is confined to the account's
// root: `..` that would climb out, NUL bytes and backslashes are refused
// rather than silently cleaned, so a wrong definition is noticed.

export function cleanRelative(value: string | undefined, field: string): string {
  const raw = (value ?? "").trim();
  if (raw.includes("\0")) throw unsafe(field, raw, "contains a NUL byte");
  if (raw.includes("\\")) throw unsafe(field, raw, "contains a backslash");
  // A leading slash means "from the account root", never the machine's root.
  const normalized = path.posix.normalize(`/${raw}`);
  const parts = raw.split("/").filter((p) => p !== "" && p !== ".");
  let depth = 0;
  for (const part of parts) {
    depth += part === ".." ? -1 : 1;
    if (depth < 0) throw unsafe(field, raw, "climbs out of the storage root");
  }
  return normalized.replace(/^\/+|\/+$/g, "");
}

/** Joins relative parts, each checked, into one relative path ("" is the root). */
export function joinRelative(...parts: Array<[string | undefined, string]>): string {
  return parts
    .map(([value, field]) => cleanRelative(value, field))
    .filter((p) => p !== "")
    .join("/");
}

/** The one segment an account is kept under; an API user with a slash would share another's root. */
export function accountSegment(apiUser: string): string {
  if (!apiUser || apiUser === "." || apiUser === ".." || /[/\\\0]/.test(apiUser))
    throw new ConveyorError("unsafe_path", `the API user "${apiUser}" cannot name a storage folder`, { hint: "set CONVEYOR_API_USER to a plain name" });
  return apiUser;
}

/** The hidden temporary name an upload is written under before its rename. */
export function partName(relative: string): string {
  const dir = path.posix.dirname(relative);
  const base = path.posix.basename(relative);
  return dir === "." ? `.${base}.part` : `${dir}/.${base}.part`;
}

export function isPartName(name: string): boolean {
  return name.startsWith(".") && name.endsWith(".part");
}

/** A file name that reads back as itself: not empty, `.` or `..`, no slash, backslash or NUL. */
export function isPlainName(name: string): boolean {
  return name !== "" && name !== "." && name !== ".." && !/[/\\\0]/.test(name);
}

/** `name-20240501-101500.ext`: the name a moved file takes when the target exists. */
export function stampedName(name: string, now: Date): string {
  const ext = path.posix.extname(name);
  const stem = name.slice(0, name.length - ext.length);
  const iso = now.toISOString();
  const stamp = `${iso.slice(0, 10).replace(/-/g, "")}-${iso.slice(11, 19).replace(/:/g, "")}`;
  return `${stem}-${stamp}${ext}`;
}

function unsafe(field: string, value: string, why: string): ConveyorError {
  return new ConveyorError("unsafe_path", `${field} "${value}" ${why}`, {
    details: { field },
    hint: "use a path relative to the connection's folder, without ..",
  });
}

/** CONVEYOR_STORAGE, which every storage connector's spec asks for; the worker always sets it (a default folder at least). */
export function storageSetting(settings: ConnectorSettings): string {
  if (!settings.storage) throw new ConveyorError("internal", "the storage connector was given no CONVEYOR_STORAGE setting");
  return settings.storage;
}
