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

/** Where a writer thread's messages go: handled in order, and `drained` settles once every message posted so far is. */
export interface InOrder<M> {
  post(msg: M): void;
  drained(): Promise<void>;
}

/**
 * Handles messages one after another, each once the one before has finished
 * (a writer's pages must reach the file in order). The first failure is
 * reported once; every later message is then ignored, as the sender stops
 * at that report.
 */
export function inOrder<M>(handle: (msg: M) => Promise<void>, fail: (msg: M, message: string) => void): InOrder<M> {
  let failed = false;
  let queue = Promise.resolve();
  return {
    post: (msg) => {
      queue = queue.then(async () => {
        if (failed) return;
        try {
          await handle(msg);
        } catch (err) {
          failed = true;
          fail(msg, err instanceof Error ? err.message : String(err));
        }
      });
    },
    drained: () => queue,
  };
}
