/**
 * Whether a file holds one of the run's secrets, in any form a file could
 * carry it in, found by searching its bytes. A debug run's copy of a file is
 * linked when the search finds none and masked when it finds one
 * (debug-mask.ts). This module imports only read-buffers.ts and secrets.ts,
 * for the threads that search: the hash thread searches a downloaded file in
 * the read that hashes it, the writer thread each bulk file it seals, and
 * any other large file is searched on a thread of its own.
 *
 * @module
 */

import { createHash } from "node:crypto";
import { open } from "node:fs/promises";
import { borrowReadBuffer, READ_BUFFER_BYTES, returnReadBuffer } from "../read-buffers.js";
import { secretCount, secretValues } from "../secrets.js";

/**
 * Every registered secret as the bytes it takes in a file: as it is (and its
 * URL and base64 forms, which secrets.ts registers), with its quotes doubled
 * in a CSV cell, escaped in a JSON string. Kept as latin1 text, one character
 * per byte, so a file is searched and rewritten without decoding it: any other
 * byte, of a text or a binary file, is copied as it was.
 */
export function secretForms(): string[] {
  const forms = new Set<string>();
  for (const secret of secretValues()) {
    for (const form of [secret, secret.replaceAll('"', '""'), JSON.stringify(secret).slice(1, -1)]) forms.add(Buffer.from(form, "utf8").toString("latin1"));
  }
  // Longest first, so that a secret holding another is masked whole.
  return [...forms].sort((a, b) => b.length - a.length);
}

/** The bytes a window keeps of the one before: a form cut by a chunk's edge is then seen whole. */
export function formsOverlap(forms: readonly string[]): number {
  return Math.max(0, (forms[0]?.length ?? 0) - 1);
}

/**
 * The file through one lent buffer, a chunk at a time, each window beginning
 * with the last `overlap` bytes of the one before, so that a secret cut by a
 * chunk's edge is seen whole; `fresh` is where the bytes not seen before
 * begin. A window is a view of that buffer, good until the next is asked for
 * (read-buffers.ts says why not a read stream).
 */
export async function* windows(file: string, overlap: number): AsyncGenerator<{ window: Buffer; fresh: number }> {
  const handle = await open(file, "r");
  const buffer = overlap < READ_BUFFER_BYTES / 2 ? borrowReadBuffer() : Buffer.allocUnsafe(overlap + READ_BUFFER_BYTES);
  const chunk = buffer.length - overlap;
  try {
    let kept = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, kept, chunk, null);
      if (bytesRead === 0) return;
      const window = buffer.subarray(0, kept + bytesRead);
      yield { window, fresh: kept };
      kept = Math.min(overlap, window.length);
      buffer.copyWithin(0, window.length - kept, window.length);
    }
  } finally {
    await handle.close();
    returnReadBuffer(buffer);
  }
}

/** Whether the file holds one of the forms: a search of the bytes that decodes nothing. */
export async function holdsForm(file: string, forms: readonly string[]): Promise<boolean> {
  if (forms.length === 0) return false;
  const needles = forms.map((form) => Buffer.from(form, "latin1"));
  for await (const { window } of windows(file, formsOverlap(forms))) if (needles.some((n) => window.includes(n))) return true;
  return false;
}

/**
 * The file's SHA-256 and whether it holds one of the forms, in one read: a
 * thread that read it twice, side by side, lived on into the busiest part of
 * a large run with a heap of its own.
 */
export async function hashAndSearch(file: string, forms: readonly string[]): Promise<{ sha256: string; found: boolean }> {
  const hash = createHash("sha256");
  const needles = forms.map((form) => Buffer.from(form, "latin1"));
  let found = false;
  for await (const { window, fresh } of windows(file, formsOverlap(forms))) {
    hash.update(window.subarray(fresh));
    if (!found && needles.some((n) => window.includes(n))) found = true;
  }
  return { sha256: hash.digest("hex"), found };
}

/** What a search found, and of how many registered secrets: a later search for more of them must look again. */
export interface SecretSearch {
  secrets: number;
  found: boolean;
}

/** Searches the file for every secret registered in this thread. */
export async function searchSecrets(file: string): Promise<SecretSearch> {
  const secrets = secretCount();
  return { secrets, found: await holdsForm(file, secretForms()) };
}
