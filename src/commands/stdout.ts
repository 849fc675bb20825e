/**
 * A reader that stops early (`conveyor debug-files <run> plan.csv | head -1`)
 * closes the pipe, and the next write fails with EPIPE. That is the reader's
 * choice, not a failure of the command: it ends quietly with exit 0, as `cat`
 * and `grep` do, instead of a stack trace or `conveyor: write EPIPE`.
 */
export function isClosedPipe(err: unknown): boolean {
  return (err as NodeJS.ErrnoException | null)?.code === "EPIPE";
}

/** Installed once by the CLI: every printing command then ends quietly when its reader goes away. */
export function endQuietlyWhenStdoutCloses(): void {
  process.stdout.on("error", (err) => {
    if (isClosedPipe(err)) process.exit(0);
    throw err;
  });
}
