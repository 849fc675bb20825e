/**
 * The copies a debug run keeps of files it did not write line by line (bulk
 * files, order bodies, the supplier's files): a bulk file must carry the real
 * values for the service, so its debug copy is where a secret the run knows
 * would show in clear. A file that holds no secret is hard-linked as before;
 * one that does is copied with each secret replaced by the mask, and the
 * count of replaced values is returned, so the run can say the copy is no
 * longer the file that would be sent.
 *
 * @module
 */

import { copyFile, link, open, rm } from "node:fs/promises";
import { borrowReadBuffer, READ_BUFFER_BYTES, returnReadBuffer } from "../read-buffers.js";
import { MASK, secretValues } from "../secrets.js";

/**
 * Every registered secret as the bytes it takes in a file: as it is (and its
 * URL and base64 forms, which secrets.ts registers), with its quotes doubled
 * in a CSV cell, escaped in a JSON string. Kept as latin1 text, one character
 * per byte, so a file is searched and rewritten without decoding it: any other
 * byte, of a text or a binary file, is copied as it was.
 */
function secretForms(): string[] {
  const forms = new Set<string>();
  for (const secret of secretValues()) {
    for (const form of [secret, secret.replaceAll('"', '""'), JSON.stringify(secret).slice(1, -1)]) forms.add(Buffer.from(form, "utf8").toString("latin1"));
  }
  // Longest first, so that a secret holding another is masked whole.
  return [...forms].sort((a, b) => b.length - a.length);
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Hard-links a file (both live under the run's folder), copying only where linking fails. */
export async function linkOrCopy(from: string, to: string): Promise<void> {
  try {
    await link(from, to);
  } catch {
    await copyFile(from, to);
  }
}

/**
 * The file through one lent buffer, a chunk at a time, each window beginning
 * with the last `overlap` bytes of the one before, so that a secret cut by a
 * chunk's edge is seen whole. A window is a view of that buffer, good until
 * the next is asked for (read-buffers.ts says why not a read stream).
 */
async function* windows(file: string, overlap: number): AsyncGenerator<Buffer> {
  const handle = await open(file, "r");
  const buffer = overlap < READ_BUFFER_BYTES / 2 ? borrowReadBuffer() : Buffer.allocUnsafe(overlap + READ_BUFFER_BYTES);
  const chunk = buffer.length - overlap;
  try {
    let kept = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, kept, chunk, null);
      if (bytesRead === 0) return;
      const window = buffer.subarray(0, kept + bytesRead);
      yield window;
      kept = Math.min(overlap, window.length);
      buffer.copyWithin(0, window.length - kept, window.length);
    }
  } finally {
    await handle.close();
    returnReadBuffer(buffer);
  }
}

/** Whether the file holds one of the forms: a search of the bytes that decodes nothing. */
async function holdsSecret(file: string, forms: readonly string[], overlap: number): Promise<boolean> {
  const needles = forms.map((form) => Buffer.from(form, "latin1"));
  for await (const window of windows(file, overlap)) if (needles.some((n) => window.includes(n))) return true;
  return false;
}

/**
 * Copies `from` to `to` with every secret masked; returns how many were.
 * A window's last `overlap` characters are left to the next window unless a
 * match begins before them: any secret that begins earlier fits whole.
 */
async function copyMasked(from: string, to: string, forms: readonly string[], overlap: number): Promise<number> {
  const pattern = new RegExp(forms.map(escape).join("|"), "g");
  // `to` may be a link kept earlier (two passes each with a bulk-1.csv): writing through it would change that file.
  await rm(to, { force: true });
  const out = await open(to, "w");
  let masked = 0;
  let skip = 0;
  try {
    const write = async (text: string, last: boolean): Promise<void> => {
      const limit = last ? text.length : text.length - overlap;
      let pos = skip;
      let piece = "";
      pattern.lastIndex = pos;
      for (let m = pattern.exec(text); m !== null && m.index < limit; m = pattern.exec(text)) {
        piece += text.slice(pos, m.index) + MASK;
        pos = m.index + m[0].length;
        masked++;
      }
      if (pos < limit) {
        piece += text.slice(pos, limit);
        pos = limit;
      }
      // The next window repeats this one's last `overlap` characters: those written already (or masked) are skipped there.
      skip = pos - (text.length - Math.min(overlap, text.length));
      await out.write(Buffer.from(piece, "latin1"));
    };
    // A window is written once the next read shows whether it was the last.
    let held: string | null = null;
    for await (const window of windows(from, overlap)) {
      if (held !== null) await write(held, false);
      held = window.toString("latin1");
    }
    if (held !== null) await write(held, true);
  } finally {
    await out.close();
  }
  return masked;
}

/** Keeps `from` as `to`: linked when it holds no secret, else a masked copy. Returns the number of values masked. */
export async function keepMasked(from: string, to: string): Promise<number> {
  const forms = secretForms();
  const overlap = Math.max(0, (forms[0]?.length ?? 0) - 1);
  if (forms.length === 0 || !(await holdsSecret(from, forms, overlap))) {
    await linkOrCopy(from, to);
    return 0;
  }
  return copyMasked(from, to, forms, overlap);
}
