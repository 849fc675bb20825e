/**
 * Buffers for reading a file a chunk at a time, lent and given back.
 *
 * Hashing or searching a file through a read stream, or through a new
 * buffer per file, leaves a megabyte of garbage per chunk or per file that
 * V8 frees only at its next collection; a run that hashes and checks two
 * hundred bulk files piled them up, and malloc kept the memory once they
 * were freed, so the process's RSS grew for good. A few spare buffers serve
 * every such read in turn. Each thread has its own. This module imports
 * nothing: a thread loads it alone.
 *
 * @module
 */

export const READ_BUFFER_BYTES = 1 << 20;

/** More reads at once than this allocate and drop their buffers as before. */
const KEPT = 4;
const spare: Buffer[] = [];

export function borrowReadBuffer(): Buffer {
  return spare.pop() ?? Buffer.allocUnsafe(READ_BUFFER_BYTES);
}

/** The caller must hold no view of the buffer any longer. */
export function returnReadBuffer(buffer: Buffer): void {
  if (buffer.length === READ_BUFFER_BYTES && spare.length < KEPT && !spare.includes(buffer)) spare.push(buffer);
}
