/**
 * The disk as each phase of a bench finds it: the same from one phase to the
 * next, whatever the phases before did.
 *
 * @module
 */

import { execFileSync } from "node:child_process";
import { open } from "node:fs/promises";

/**
 * What the phases before wrote is flushed first: written back meanwhile, it
 * slowed the next phase's own writes. Then `file` (the feed) is read once, so
 * that every phase, the reference as the others, starts with it in the page
 * cache: this machine pages out what was not read for a minute (DAMON's
 * reclaim), and a phase whose download of the feed, a copy in the kernel,
 * found it paged out waited on the disk.
 */
export async function settleDisk(file: string): Promise<void> {
  execFileSync("sync");
  const handle = await open(file);
  try {
    const buffer = Buffer.allocUnsafe(1 << 20);
    while ((await handle.read(buffer, 0, buffer.length)).bytesRead > 0);
  } finally {
    await handle.close();
  }
}
