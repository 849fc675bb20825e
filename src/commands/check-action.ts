import { clearCredentials, definitionWarnings, describeProblem, loadAutomationFile, type Problem } from "../definition/index.js";
import { isConveyorError } from "../errors.js";
import { EXIT, runCommand } from "./context.js";

export interface FileCheck {
  file: string;
  ok: boolean;
  problems: Problem[];
  /** Valid, but probably not what was meant. */
  warnings: Problem[];
}

/** Whatever went wrong with one file is that file's problem: the other files are still checked and reported. */
function problemsOf(err: unknown): Problem[] {
  if (isConveyorError(err)) {
    const listed = err.details.problems;
    if (Array.isArray(listed) && listed.length > 0) return listed as Problem[];
    return [{ path: "", message: err.message }];
  }
  return [{ path: "", message: `could not be checked: ${err instanceof Error ? err.message : String(err)}` }];
}

export async function checkFiles(files: readonly string[]): Promise<FileCheck[]> {
  const out: FileCheck[] = [];
  for (const file of files) {
    try {
      const automation = await loadAutomationFile(file);
      out.push({ file, ok: true, problems: [], warnings: [...definitionWarnings(automation), ...clearCredentials(automation)] });
    } catch (err) {
      out.push({ file, ok: false, problems: problemsOf(err), warnings: [] });
    }
  }
  return out;
}

/** `file: path: message (allowed: …)`; continuation lines (a search caret) are indented under it. */
export function formatChecks(checks: readonly FileCheck[]): string {
  const lines: string[] = [];
  for (const c of checks) {
    if (c.ok) lines.push(`${c.file}: ok`);
    for (const w of c.warnings) lines.push(`${c.file}: warning: ${describeProblem(w)}`);
    for (const p of c.problems) lines.push(`${c.file}: ${describeProblem(p).replace(/\n/g, "\n    ")}`);
  }
  const bad = checks.filter((c) => !c.ok);
  const count = bad.reduce((n, c) => n + c.problems.length, 0);
  lines.push(bad.length === 0 ? `${checks.length} definition${checks.length === 1 ? "" : "s"} valid` : `${count} problem${count === 1 ? "" : "s"} in ${bad.length} of ${checks.length} definition${checks.length === 1 ? "" : "s"}`);
  return `${lines.join("\n")}\n`;
}

/** What `conveyor check` does; check.ts declares its arguments and options. */
export async function checkAction(files: string[], opts: { json?: boolean }): Promise<void> {
  const json = opts.json === true;
  await runCommand(json, async () => {
    const checks = await checkFiles(files);
    process.stdout.write(json ? `${JSON.stringify({ files: checks })}\n` : formatChecks(checks));
    return checks.every((c) => c.ok) ? EXIT.ok : EXIT.usage;
  });
}
