/**
 * Crash points for the tests that prove a run interrupted at the worst moment
 * leaves state a re-run can finish from. `CONVEYOR_FAULT=<point>` kills the
 * process there, as a power cut or an OOM kill would; `<point>:<n>` kills it
 * the n-th time the point is reached (the n-th bulk file). Unset, it costs one
 * comparison.
 *
 * * `after-send`: a bulk file (order body) is on its way, its result unread.
 * * `after-result`: a bulk file's (order body's) result was read and recorded.
 * * `after-apply`: every file of a pass was applied, nothing committed yet.
 * * `before-pointers`: the run has committed its snapshot and ledger; its pointers are not stored yet.
 *
 * @module
 */

export type FaultPoint = "after-send" | "after-result" | "after-apply" | "before-pointers";

export function faultPoint(point: FaultPoint, n?: number): void {
  const wanted = process.env.CONVEYOR_FAULT;
  if (wanted === undefined) return;
  if (wanted === point || (n !== undefined && wanted === `${point}:${n}`)) process.kill(process.pid, "SIGKILL");
}
