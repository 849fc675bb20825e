import { Worker } from "node:worker_threads";

/**
 * Starts a worker thread on `entry`, a module next to `from` (an
 * `import.meta.url`), named by its base name. Built, the sources are
 * JavaScript and the thread loads `<entry>.js`; under the test runner they
 * are TypeScript, which Node does not load by itself, and the thread imports
 * `<entry>.ts` through tsx, as the runner does.
 */
export function startThread(entry: string, from: string, workerData: unknown): Worker {
  if (!from.endsWith(".ts")) return new Worker(new URL(`./${entry}.js`, from), { workerData });
  const source = new URL(`./${entry}.ts`, from).href;
  const load = `import("tsx/esm/api").then(({ tsImport }) => tsImport(${JSON.stringify(source)}, ${JSON.stringify(from)}))`;
  return new Worker(load, { eval: true, workerData });
}
