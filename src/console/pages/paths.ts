/**
 * The console's addresses of a run: its page, the plan viewer, the JSON its
 * script polls and its debug file downloads. One place, so the pages, the
 * routes and the script agree.
 */
export function runPaths(runId: string): { page: string; plan: string; live: string; file: (name: string) => string } {
  const base = `/runs/${encodeURIComponent(runId)}`;
  return {
    page: base,
    plan: `${base}/plan`,
    live: `${base}/live.json`,
    file: (name) => `${base}/files/${name.split("/").map(encodeURIComponent).join("/")}`,
  };
}
