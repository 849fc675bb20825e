/**
 * Worker settings, parsed. The table in settings-table.ts drives everything:
 * the config-file key, the environment name, the command-line flag, the
 * default and the README text. Precedence: defaults < config file <
 * environment < flags.
 */

import { readFileSync, existsSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { ConveyorError } from "./errors.js";
import { registerSecret, registerUrlSecrets } from "./secrets.js";
import { parseDuration } from "./duration.js";
import { SETTINGS, type SettingKey } from "./settings-table.js";

export { SETTINGS } from "./settings-table.js";

const duration = z.union([z.number().int().nonnegative(), z.string()]).transform((v, ctx) => {
  if (typeof v === "number") return v;
  try {
    return parseDuration(v);
  } catch (err) {
    ctx.addIssue({ code: "custom", message: (err as Error).message });
    return z.NEVER;
  }
});
const bool = z.union([z.boolean(), z.enum(["true", "false", "1", "0", "yes", "no"])]).transform((v) => v === true || v === "true" || v === "1" || v === "yes");
const positiveInt = z.coerce.number().int().positive();
const optionalText = z.string().min(1).optional();
const hostPort = (example: string): z.ZodString =>
  z
    .string()
    .regex(/^(?:[^:[\]]+|\[[0-9A-Fa-f:.]+\]):\d{1,5}$/, `host:port, e.g. 127.0.0.1:${example} or [::1]:${example} (port 0: any free port)`)
    .refine((v) => Number(v.slice(v.lastIndexOf(":") + 1)) <= 65535, "the port must be 0 to 65535 (0: any free port)");

const rawSchema = z
  .object({
    data_dir: z.string().min(1).default("./.conveyor"),
    service_url: z.url({ protocol: /^https?$/ }).optional(),
    api_user: optionalText,
    api_token: optionalText,
    integration: z.string().min(1).default("conveyor"),
    database_url: optionalText,
    automations: optionalText,
    listen: hostPort("8080").default("127.0.0.1:8080"),
    service_listen: hostPort("8081").default("127.0.0.1:8081"),
    secret_key: optionalText,
    smtp_url: optionalText,
    notify_email: optionalText,
    alert_email: optionalText,
    alert_after: positiveInt.default(3),
    silence_alert: duration.optional(),
    allow_private_hosts: bool.default(false),
    storage: optionalText,
    concurrency: positiveInt.default(4),
    bulk_rows: positiveInt.default(5000),
    full_run_every: duration.default(24 * 3600_000),
    event_catchup: duration.refine((ms) => ms >= 1000, "must be 1s or more").default(15 * 60_000),
    push_max_bytes: positiveInt.default(2 * 1024 ** 3),
    max_run_time: duration.default(2 * 3600_000),
    run_lease: duration.default(60_000),
    debug_rows: z.coerce.number().int().nonnegative().default(1000),
    debug_file_limit: positiveInt.default(64),
    run_retention: duration.default(30 * 24 * 3600_000),
    console_session: duration.default(12 * 3600_000),
    read_limit: positiveInt.default(300),
    write_limit: positiveInt.default(60),
    log_level: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
    public_url: z.url({ protocol: /^https?$/ }).optional(),
    event_window: duration.default(5_000),
  })
  .strict();

type RawSettings = z.input<typeof rawSchema>;

// The table and the schema name the same settings: a key in one and not the other fails to compile.
const sameKeys: [SettingKey, keyof RawSettings] extends [keyof RawSettings, SettingKey] ? true : never = true;
void sameKeys;

export interface Settings {
  dataDir: string;
  serviceUrl: string | undefined;
  apiUser: string | undefined;
  apiToken: string | undefined;
  integration: string;
  databaseUrl: string | undefined;
  automations: string | undefined;
  listen: HostPort;
  /** Where `conveyor daemon` and `conveyor service` serve the embedded service; a CLI run's in-process one takes any free port. */
  serviceListen: HostPort;
  secretKey: string | undefined;
  smtpUrl: string | undefined;
  notifyEmail: string | undefined;
  alertEmail: string | undefined;
  alertAfter: number;
  silenceAlertMs: number | undefined;
  allowPrivateHosts: boolean;
  /** Resolved: a local folder, `s3://…` or `sftp://…`. */
  storage: string;
  concurrency: number;
  bulkRows: number;
  fullRunEveryMs: number;
  /** An automation on events without a schedule runs this often (diff) to catch what no event brought. */
  eventCatchUpMs: number;
  /** Largest pushed feed, in bytes. */
  pushMaxBytes: number;
  maxRunTimeMs: number;
  runLeaseMs: number;
  debugRows: number;
  debugFileLimitMb: number;
  runRetentionMs: number;
  /** How long a console sign-in lasts (fixed from sign-in, not extended by use). */
  consoleSessionMs: number;
  readLimit: number;
  writeLimit: number;
  logLevel: string;
  /** Base URL the service reaches the daemon at, for its webhook endpoint; undefined: the listen address (embedded service only). */
  publicUrl: string | undefined;
  eventWindowMs: number;
  /** True when no service URL is set: the embedded service is started in-process. */
  embedded: boolean;
}

export interface HostPort {
  host: string;
  port: number;
}

export interface LoadSettingsInput {
  /** `--config FILE`; otherwise `conveyor.config.json` in `cwd` when present. */
  configFile?: string;
  env?: NodeJS.ProcessEnv;
  /** Flag values by setting key (`data_dir`), already parsed by the CLI. */
  flags?: Partial<Record<keyof RawSettings, string | number | boolean>>;
  cwd?: string;
}

function readConfigFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new ConveyorError("settings_invalid", `cannot read config file ${file}: ${(err as Error).message}`, { cause: err });
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("the top level must be an object");
    return parsed as Record<string, unknown>;
  } catch (err) {
    throw new ConveyorError("settings_invalid", `config file ${file} is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
}

export function loadSettings(input: LoadSettingsInput = {}): Settings {
  const cwd = input.cwd ?? process.cwd();
  const env = input.env ?? process.env;
  const merged: Record<string, unknown> = {};
  const defaultFile = path.join(cwd, "conveyor.config.json");
  const file = input.configFile ?? (existsSync(defaultFile) ? defaultFile : undefined);
  if (file) Object.assign(merged, readConfigFile(path.resolve(cwd, file)));
  for (const spec of SETTINGS) {
    const value = env[spec.env];
    if (value !== undefined && value !== "") merged[spec.key] = value;
  }
  for (const [key, value] of Object.entries(input.flags ?? {})) if (value !== undefined) merged[key] = value;

  const result = rawSchema.safeParse(merged);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => {
      const key = String(issue.path[0] ?? "");
      const spec = SETTINGS.find((s) => s.key === key);
      const where = spec ? `${key} (${spec.env}, ${spec.flag})` : key || "settings";
      const allowed = issue.code === "unrecognized_keys" ? `; known settings: ${SETTINGS.map((s) => s.key).join(", ")}` : "";
      return `${where}: ${issue.message}${allowed}`;
    });
    throw new ConveyorError("settings_invalid", `invalid settings:\n  ${problems.join("\n  ")}`, { details: { problems } });
  }
  const raw = result.data;
  for (const spec of SETTINGS) {
    if (!spec.secret) continue;
    const value = raw[spec.key];
    registerSecret(value);
    // A database or SMTP error may quote the URL's password alone.
    if (typeof value === "string") registerUrlSecrets(value);
  }
  const dataDir = path.resolve(cwd, raw.data_dir);
  const storage = raw.storage
    ? /^(s3|sftp):\/\//.test(raw.storage)
      ? raw.storage
      : path.resolve(cwd, raw.storage)
    : path.join(dataDir, "storage");
  return {
    dataDir,
    serviceUrl: raw.service_url?.replace(/\/+$/, ""),
    apiUser: raw.api_user,
    apiToken: raw.api_token,
    integration: raw.integration,
    databaseUrl: raw.database_url,
    automations: raw.automations ?? (raw.service_url ? undefined : path.resolve(cwd, "samples")),
    listen: parseHostPort(raw.listen),
    serviceListen: parseHostPort(raw.service_listen),
    secretKey: raw.secret_key,
    smtpUrl: raw.smtp_url,
    notifyEmail: raw.notify_email,
    alertEmail: raw.alert_email,
    alertAfter: raw.alert_after,
    silenceAlertMs: raw.silence_alert,
    allowPrivateHosts: raw.allow_private_hosts,
    storage,
    concurrency: raw.concurrency,
    bulkRows: raw.bulk_rows,
    fullRunEveryMs: raw.full_run_every,
    eventCatchUpMs: raw.event_catchup,
    pushMaxBytes: raw.push_max_bytes,
    maxRunTimeMs: raw.max_run_time,
    runLeaseMs: raw.run_lease,
    debugRows: raw.debug_rows,
    debugFileLimitMb: raw.debug_file_limit,
    runRetentionMs: raw.run_retention,
    consoleSessionMs: raw.console_session,
    readLimit: raw.read_limit,
    writeLimit: raw.write_limit,
    logLevel: raw.log_level,
    publicUrl: raw.public_url?.replace(/\/+$/, ""),
    eventWindowMs: raw.event_window,
    embedded: raw.service_url === undefined,
  };
}

/** `host:port` as the schema let it through; an IPv6 host is written in brackets ([::1]:8080), the server takes it without them. */
function parseHostPort(text: string): HostPort {
  const at = text.lastIndexOf(":");
  return { host: text.slice(0, at).replace(/^\[(.*)\]$/, "$1"), port: Number(text.slice(at + 1)) };
}

/** The README table of settings, generated from the same table as the parser. */
export function settingsTable(): string {
  const rows = SETTINGS.map((s) => `| \`${s.key}\` | \`${s.env}\` | \`${s.flag}\` | ${s.default} | ${s.describe} |`);
  return ["| config key | environment | flag | default | what |", "|---|---|---|---|---|", ...rows].join("\n");
}
