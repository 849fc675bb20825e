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

import { copyFile, link, open, rm, stat } from "node:fs/promises";
import { MASK, secretCount } from "../secrets.js";
import { threadAnswer } from "../thread.js";
import { formsOverlap, holdsForm, secretForms, windows, type SecretSearch } from "./secret-search.js";

/** A file this large is searched on a thread of its own: the main thread reads and plans the feed meanwhile. */
const THREAD_FROM_BYTES = 16 << 20;

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
    for await (const { window } of windows(from, overlap)) {
      if (held !== null) await write(held, false);
      held = window.toString("latin1");
    }
    if (held !== null) await write(held, true);
  } finally {
    await out.close();
  }
  return masked;
}

/** Whether the file holds one of the forms, searched here or, when large, on a thread. */
async function holdsSecret(file: string, forms: readonly string[]): Promise<boolean> {
  if ((await stat(file)).size < THREAD_FROM_BYTES) return holdsForm(file, forms);
  const answer = (value: unknown): boolean | undefined => (typeof value === "boolean" ? value : undefined);
  return threadAnswer("secret-search-thread", import.meta.url, { file, forms }, answer);
}

/**
 * Keeps `from` as `to`: linked when it holds no secret, else a masked copy.
 * Returns the number of values masked. `searched`: what a search of the
 * file found already (the writer thread's, as it sealed a bulk file); it
 * stands only while no secret was registered since.
 */
export async function keepMasked(from: string, to: string, searched?: SecretSearch): Promise<number> {
  const forms = secretForms();
  const found = searched?.secrets === secretCount() ? searched.found : forms.length > 0 && (await holdsSecret(from, forms));
  if (!found) {
    await linkOrCopy(from, to);
    return 0;
  }
  return copyMasked(from, to, forms, formsOverlap(forms));
}
