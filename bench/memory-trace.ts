/**
 * What a bench phase's memory does over time, for explaining its peak RSS:
 * with BENCH_MEMORY_TRACE=<folder>, `bench:import` writes one line every
 * 20 ms of each phase to `<folder>/<phase>-<pid>.tsv`: the RSS and its
 * anonymous and file-backed parts, the process's threads, V8's heap (its
 * total, what is used, the new and old spaces) and its external memory.
 * A phase's peak RSS moves from one run to the next; the lines of a high
 * run beside a low one show where (the README has what they showed).
 *
 * @module
 */

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import v8 from "node:v8";

const PERIOD_MS = 20;
const MB = 2 ** 20;

/** `/proc/self/status`'s figures in kB by name, or an empty map off Linux. */
function procStatus(): Map<string, number> {
  const out = new Map<string, number>();
  try {
    for (const match of readFileSync("/proc/self/status", "utf8").matchAll(/^(\w+):\s+(\d+)/gm)) out.set(match[1] ?? "", Number(match[2]));
  } catch {
    return out;
  }
  return out;
}

/** Of the RSS, the pages mapped from files (Node's own binary, native add-ons); undefined off Linux. */
export function fileBackedRss(): number | undefined {
  const kb = procStatus().get("RssFile");
  return kb === undefined ? undefined : kb * 1024;
}

function spaceSizes(): { newSpace: number; oldSpace: number } {
  const spaces = v8.getHeapSpaceStatistics();
  const size = (name: string): number => spaces.find((s) => s.space_name === name)?.space_size ?? 0;
  return { newSpace: size("new_space"), oldSpace: size("old_space") };
}

/** Starts the trace of `phase` when BENCH_MEMORY_TRACE names a folder; `stop` writes it. */
export function startMemoryTrace(phase: string): { stop(): void } | null {
  const folder = process.env.BENCH_MEMORY_TRACE;
  if (!folder) return null;
  const start = Date.now();
  const lines = ["ms\trss\tanon\tfile\tthreads\theap_total\theap_used\tnew_space\told_space\texternal"];
  const timer = setInterval(() => {
    const m = process.memoryUsage();
    const status = procStatus();
    const { newSpace, oldSpace } = spaceSizes();
    const kb = (name: string): string => ((status.get(name) ?? 0) / 1024).toFixed(1);
    const mb = (bytes: number): string => (bytes / MB).toFixed(1);
    lines.push([Date.now() - start, mb(m.rss), kb("RssAnon"), kb("RssFile"), status.get("Threads") ?? 0, mb(m.heapTotal), mb(m.heapUsed), mb(newSpace), mb(oldSpace), mb(m.external)].join("\t"));
  }, PERIOD_MS);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      mkdirSync(folder, { recursive: true });
      writeFileSync(path.join(folder, `${phase.replace(/\W+/g, "-")}-${process.pid}.tsv`), `${lines.join("\n")}\n`);
    },
  };
}
