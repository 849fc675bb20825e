import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { startEmbeddedService, type EmbeddedService, type EmbeddedServiceOptions } from "../../src/embedded/index.js";

export interface Harness {
  svc: EmbeddedService;
  dataDir: string;
  /** fetch with the account's credentials. */
  call(method: string, urlPath: string, body?: unknown, headers?: Record<string, string>): Promise<Response>;
  json(method: string, urlPath: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }>;
  form(urlPath: string, fields: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }>;
  close(): Promise<void>;
}

/** Limits raised so a test file is not throttled unless it means to be. */
export const HIGH_LIMITS = { readLimit: 100_000, writeLimit: 100_000, optionsLimit: 100_000 };

export async function startHarness(options: Partial<EmbeddedServiceOptions> = {}, dataDir?: string): Promise<Harness> {
  const dir = dataDir ?? mkdtempSync(path.join(tmpdir(), "conveyor-embedded-"));
  const svc = await startEmbeddedService({ dataDir: dir, ...HIGH_LIMITS, ...options });
  const auth = { "X-Auth-User": svc.apiUser, "X-Auth-Token": svc.apiToken };
  const call = (method: string, urlPath: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> => {
    const init: RequestInit = { method, headers: { ...auth, ...headers } };
    if (body instanceof FormData || body instanceof URLSearchParams) init.body = body;
    else if (body !== undefined) {
      init.body = JSON.stringify(body);
      (init.headers as Record<string, string>)["content-type"] = "application/json";
    }
    return fetch(`${svc.url}${urlPath}`, init);
  };
  return {
    svc,
    dataDir: dir,
    call,
    async json(method, urlPath, body) {
      const res = await call(method, urlPath, body);
      return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
    },
    async form(urlPath, fields) {
      const res = await call("POST", urlPath, new URLSearchParams(fields));
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    },
    async close() {
      await svc.close();
      if (!dataDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function waitFor<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Entries of a v1 listing keyed "1", "2", … in key order. */
export function ordinals(body: Record<string, unknown>): [string, Record<string, string>][] {
  return Object.entries(body)
    .filter(([k]) => /^\d+$/.test(k))
    .sort(([a], [b]) => Number(a) - Number(b)) as [string, Record<string, string>][];
}
