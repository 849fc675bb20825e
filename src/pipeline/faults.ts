/**
 * Crash points for the tests that prove a run interrupted at the worst moment
 * leaves state a re-run can finish from. `CONVEYOR_FAULT=<point>` kills the
 * process there, as a power cut or an OOM kill would; unset, it costs one
 * comparison.
 */
export type FaultPoint = "after-apply";

export function faultPoint(point: FaultPoint): void {
  if (process.env.CONVEYOR_FAULT === point) process.kill(process.pid, "SIGKILL");
}
