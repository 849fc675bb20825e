/**
 * What is left of a writev after it wrote `written` bytes: writev may write
 * less than asked (a full disk says so on the next call), and the rest goes
 * again. The download writers of SFTP ranges and FTP share it.
 */
export function unwritten(buffers: readonly Buffer[], written: number): Buffer[] {
  let skip = written;
  const rest: Buffer[] = [];
  for (const b of buffers) {
    if (skip >= b.length) skip -= b.length;
    else {
      rest.push(skip > 0 ? b.subarray(skip) : b);
      skip = 0;
    }
  }
  return rest;
}
