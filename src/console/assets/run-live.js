/* global document, window, fetch, setTimeout */
// The run page's progress block while the run runs: polls the block's
// data-live-url once a second, fills its data-live-field elements, updates the
// aria-live text (announced at most every 10 s, so a screen reader is not
// flooded), and reloads the page with the summary once the run finished.
// Served as a file by the console's asset route: the CSP allows no inline script.
(() => {
  "use strict";
  const block = document.querySelector("[data-live]");
  if (!block) return;
  const url = block.getAttribute("data-live-url");
  if (!url) return;
  const text = block.querySelector("[data-live-text]");
  const field = (name) => block.querySelector(`[data-live-field="${name}"]`);
  const int = (n) => Number(n).toLocaleString("en-US");
  const ANNOUNCE_MS = 10000;
  const POLL_MS = 1000;
  let lastAnnounced = 0;
  let failures = 0;

  function describe(live) {
    if (live.state === "finished") return `Finished: ${live.outcome || "unknown"}`;
    const p = live.progress;
    if (!p) return "Starting";
    const files = p.files ? `, ${int(p.files.done)} of ${int(p.files.total)} bulk files` : "";
    const rate = p.rate > 0 ? `, ${int(p.rate)} rows/s` : "";
    return `${p.stage}: ${int(p.rows)} rows${rate}${files}`;
  }

  function show(live) {
    const p = live.progress;
    const set = (name, value) => {
      const el = field(name);
      if (el) el.textContent = value;
    };
    if (p) {
      set("stage", p.stage);
      set("rows", int(p.rows));
      set("rate", p.rate > 0 ? `${int(p.rate)} rows/s` : "–");
      set("files", p.files ? `${int(p.files.done)} of ${int(p.files.total)}` : "–");
      const bar = field("bar");
      if (bar && p.files) {
        bar.max = p.files.total;
        bar.value = p.files.done;
        bar.hidden = false;
      }
    }
    const now = Date.now();
    if (text && (live.state === "finished" || now - lastAnnounced >= ANNOUNCE_MS)) {
      text.textContent = describe(live);
      lastAnnounced = now;
    }
  }

  async function poll() {
    try {
      const res = await fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin", cache: "no-store" });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      const live = await res.json();
      failures = 0;
      show(live);
      if (live.state === "finished") {
        // A moment for the announcement, then the page with the summary.
        setTimeout(() => window.location.reload(), 1500);
        return;
      }
    } catch {
      failures++;
      // A daemon restarting or a dropped connection: keep trying, slower, and say so after a few misses.
      if (failures === 5 && text) text.textContent = "Progress is not reaching this page; it keeps trying.";
    }
    setTimeout(poll, failures ? Math.min(POLL_MS * 2 ** failures, 30000) : POLL_MS);
  }

  setTimeout(poll, POLL_MS);
})();
