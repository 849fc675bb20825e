/**
 * One template's render process, driven from the run: each request has a
 * deadline (the watchdog kills the process past it), the process's heap is
 * capped, and every failure becomes a ConveyorError `template` naming
 * `file_configs[i].template`. A child process rather than a worker thread:
 * a thread that ran out of its resourceLimits could abort the whole worker
 * (see render-process.ts).
 *
 * @module
 */

import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { ConveyorError } from "../errors.js";
import type { RenderReply, RenderRequest, RenderSetup } from "./protocol.js";
import { streamParts } from "./stream.js";

export interface TemplateLimits {
  /** Wall time of one request: one render, or one batch of streamed records. */
  timeMs: number;
  /** Characters of one render. */
  outputChars: number;
  /** The render process's heap. */
  memoryMb: number;
  /** Records a template without a top-level loop over data gets at once. */
  inMemoryRecords: number;
}

export const TEMPLATE_LIMITS: TemplateLimits = { timeMs: 10_000, outputChars: 16 * 1024 * 1024, memoryMb: 256, inMemoryRecords: 10_000 };

/** Starting the process (and, under the test runner, loading TypeScript) is not held to a render's deadline. */
const START_MS = 30_000;

export interface TemplateOptions {
  source: string;
  /** `file_configs[i].template`, named by every error. */
  field: string;
  /** `payload_multi`: false renders once per record. */
  multi: boolean;
  timezone: string;
  now: Date;
  params: Record<string, string>;
  limits?: Partial<TemplateLimits>;
}

/** Built, the entry is JavaScript; under the test runner it is TypeScript, loaded through tsx as the runner does. */
function startProcess(memoryMb: number): ChildProcess {
  const ts = import.meta.url.endsWith(".ts");
  const entry = fileURLToPath(new URL(`./render-process.${ts ? "ts" : "js"}`, import.meta.url));
  // Only what Node and tsx need: the template has no business with the worker's settings or secrets.
  const env: Record<string, string> = { TZ: "UTC" };
  for (const key of ["PATH", "TMPDIR", "HOME"]) if (process.env[key]) env[key] = process.env[key];
  return fork(entry, [], { execArgv: [...(ts ? ["--import", "tsx"] : []), `--max-old-space-size=${memoryMb}`], env, serialization: "advanced", stdio: ["ignore", "ignore", "pipe", "ipc"] });
}

export class TemplateProcess {
  private failed: ConveyorError | null = null;
  private pending: { resolve: (r: RenderReply) => void; reject: (e: Error) => void } | null = null;
  private stderr = "";

  private constructor(
    private readonly child: ChildProcess,
    readonly field: string,
    readonly limits: TemplateLimits,
    /** True when a `payload_multi: 1` template renders its top-level loop over data record by record. */
    readonly streamed: boolean,
  ) {
    child.on("message", (reply: RenderReply) => {
      const p = this.pending;
      this.pending = null;
      p?.resolve(reply);
    });
    // The last lines of a crashed process say why (V8's heap message): kept short.
    child.stderr?.on("data", (chunk: Buffer) => (this.stderr = (this.stderr + chunk.toString("utf8")).slice(-4000)));
    child.on("error", (err) => this.fail(new ConveyorError("template", `${this.field}: the render process failed: ${err.message}`, { details: { field: this.field }, cause: err })));
    child.on("exit", (code, signal) => this.fail(this.exitError(code, signal)));
  }

  static async start(options: TemplateOptions): Promise<TemplateProcess> {
    const limits = { ...TEMPLATE_LIMITS, ...options.limits };
    const parts = options.multi ? streamParts(options.source) : null;
    const setup: RenderSetup = { source: options.source, parts, timezone: options.timezone, nowMs: options.now.getTime(), params: options.params, maxOutputChars: limits.outputChars };
    const proc = new TemplateProcess(startProcess(limits.memoryMb), options.field, limits, parts !== null);
    const ready = proc.wait(Math.max(limits.timeMs, START_MS), "starting the template");
    proc.child.send(setup);
    try {
      await ready;
    } catch (err) {
      await proc.close();
      throw err;
    }
    return proc;
  }

  private exitError(code: number | null, signal: NodeJS.Signals | null): ConveyorError {
    if (/heap out of memory|heap limit/i.test(this.stderr)) {
      return new ConveyorError("template", `${this.field}: the render used more than ${this.limits.memoryMb} MB and was stopped`, {
        details: { field: this.field },
        hint: "A template that builds a very large text in one render (a loop over a huge range, a long repeated string) is stopped; render per record with a top-level {% for r in data %} loop.",
      });
    }
    return new ConveyorError("template", `${this.field}: the render process stopped (${signal ?? `exit code ${String(code)}`})`, { details: { field: this.field } });
  }

  private fail(err: ConveyorError): void {
    this.failed ??= err;
    const p = this.pending;
    this.pending = null;
    p?.reject(this.failed);
  }

  private wait(timeMs: number, what: string): Promise<string[]> {
    if (this.failed) return Promise.reject(this.failed);
    return new Promise<string[]>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.fail(
          new ConveyorError("template", `${this.field}: ${what} took longer than ${timeMs / 1000} s and was stopped`, {
            details: { field: this.field },
            hint: "A template that never ends (a loop over a huge range) is stopped; check the loops of the template.",
          }),
        );
        this.child.kill("SIGKILL");
      }, timeMs);
      this.pending = {
        resolve: (reply) => {
          clearTimeout(timer);
          if (reply.ok) resolve(reply.texts);
          else reject(new ConveyorError("template", `${this.field}: ${reply.message}`, { details: { field: this.field } }));
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      };
    });
  }

  /** One request at a time: the pass awaits each. */
  request(req: RenderRequest): Promise<string[]> {
    const reply = this.wait(this.limits.timeMs, "rendering");
    if (!this.failed) this.child.send(req);
    return reply;
  }

  async close(): Promise<void> {
    this.failed ??= new ConveyorError("template", `${this.field}: the template was closed`);
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    this.child.kill("SIGKILL");
    await exited;
  }
}
