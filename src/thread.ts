import { parentPort, Worker } from "node:worker_threads";

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

/**
 * A thread that works out one answer: started on `entry` (as startThread),
 * awaited, and stopped. The thread answers through `answerParent`; `read`
 * checks the value it sent, as any message from another thread is checked.
 */
export async function threadAnswer<T>(entry: string, from: string, workerData: unknown, read: (value: unknown) => T | undefined): Promise<T> {
  const thread = startThread(entry, from, workerData);
  try {
    const reply = await new Promise<unknown>((resolve, reject) => {
      thread.once("message", resolve);
      thread.once("error", reject);
      thread.once("exit", (code) => reject(new Error(`the thread stopped without an answer (exit code ${code})`)));
    });
    const { value, error } = (reply ?? {}) as { value?: unknown; error?: unknown };
    if (typeof error === "string") throw new Error(error);
    const answer = read(value);
    if (answer === undefined) throw new Error(`the thread answered ${JSON.stringify(reply)}`);
    return answer;
  } finally {
    await thread.terminate();
  }
}

/** In a thread started by `threadAnswer`: sends what `work` gives, or the message of its error. */
export async function answerParent(work: () => Promise<unknown>): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error("this module runs as a worker thread");
  try {
    port.postMessage({ value: await work() });
  } catch (err) {
    port.postMessage({ error: err instanceof Error ? err.message : String(err) });
  }
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
