import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { loadSettings, type Settings } from "../../src/config.js";
import { createLogger } from "../../src/log.js";
import type { ConnectorContext, MetadataStore } from "../../connectors/types.js";

/** Metadata kept in a Map, as the automation's `metadata` would keep it between runs. */
export class MemoryMetadata implements MetadataStore {
  readonly values = new Map<string, unknown>();
  sets = 0;

  get(key: string): unknown {
    const v = this.values.get(key);
    // A stored copy, as a database round trip would give.
    return v === undefined ? undefined : JSON.parse(JSON.stringify(v));
  }

  async set(key: string, value: unknown): Promise<void> {
    this.sets++;
    this.values.set(key, JSON.parse(JSON.stringify(value)));
  }
}

export interface TestContext extends ConnectorContext {
  metadata: MemoryMetadata;
  /** Every log line written so far (debug level and up), as JSON text. */
  logText(): string;
}

/** A connector context over a temp data folder, with a capturing verbose logger. */
export function memoryContext(overrides: Partial<Settings> = {}, extra: Partial<Omit<ConnectorContext, "metadata">> = {}): TestContext {
  const dataDir = mkdtempSync(path.join(tmpdir(), "conveyor-ctx-"));
  const base = loadSettings({ env: {}, cwd: dataDir, flags: { data_dir: dataDir } });
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return {
    settings: { ...base, allowPrivateHosts: true, ...overrides },
    logger: createLogger({ destination, level: "debug" }),
    metadata: new MemoryMetadata(),
    apiUser: "demo",
    verbose: true,
    ...extra,
    logText: () => lines.join(""),
  };
}
