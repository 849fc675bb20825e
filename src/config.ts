import { readFileSync, existsSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { ConveyorError } from "./errors.js";
import { registerSecret, registerUrlSecrets } from "./secrets.js";
import { parseDuration } from "./duration.js";

/**
 * Worker settings. One table drives everything: the config-file key, the
 * environment name, the command-line flag, the default and the README text.
 * Precedence: defaults < config file < environment < flags.
 */
interface SettingSpec {
  key: keyof RawSettings;
  env: string;
  flag: string;
  describe: string;
  default: string;
  secret?: boolean;
}

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

export const SETTINGS: readonly SettingSpec[] = [
  { key: "data_dir", env: "CONVEYOR_DATA_DIR", flag: "--data-dir", default: "./.conveyor", describe: "data folder: SQLite file, run work folders, debug files, embedded service data, storage" },
  { key: "service_url", env: "CONVEYOR_SERVICE_URL", flag: "--service-url", default: "none: the embedded service runs in-process", describe: "base URL of the commerce service" },
  { key: "api_user", env: "CONVEYOR_API_USER", flag: "--api-user", default: "embedded: `demo`", describe: "API user of the service" },
  { key: "api_token", env: "CONVEYOR_API_TOKEN", flag: "--api-token", default: "embedded: generated once in the data folder", describe: "API token of the service", secret: true },
  { key: "integration", env: "CONVEYOR_INTEGRATION", flag: "--integration", default: "conveyor", describe: "partner identifier sent as `X-Auth-Integration`" },
  { key: "database_url", env: "CONVEYOR_DATABASE_URL", flag: "--database-url", default: "SQLite file in the data folder", describe: "state database; `postgres://…` for state shared by several daemons", secret: true },
  { key: "automations", env: "CONVEYOR_AUTOMATIONS", flag: "--automations", default: "`./samples` when the service is embedded", describe: "folder of automation definitions loaded at daemon start" },
  { key: "listen", env: "CONVEYOR_LISTEN", flag: "--listen", default: "127.0.0.1:8080", describe: "daemon listen address" },
  { key: "service_listen", env: "CONVEYOR_SERVICE_LISTEN", flag: "--service-listen", default: "127.0.0.1:8081", describe: "embedded service listen address of `conveyor daemon` and `conveyor service`; a `conveyor run` starts its own on any free port" },
  { key: "secret_key", env: "CONVEYOR_SECRET_KEY", flag: "--secret-key", default: "generated once in the data folder (mode 0600)", describe: "key for encrypted parameters (64 hex chars or base64 of 32 bytes)", secret: true },
  { key: "smtp_url", env: "CONVEYOR_SMTP_URL", flag: "--smtp-url", default: "none (notifications are refused)", describe: "SMTP for notifications and e-mail exports, `smtp://user:pass@host:587`", secret: true },
  { key: "notify_email", env: "CONVEYOR_NOTIFY_EMAIL", flag: "--notify-email", default: "none", describe: "default notification address" },
  { key: "alert_email", env: "CONVEYOR_ALERT_EMAIL", flag: "--alert-email", default: "none", describe: "address alerted on failed runs, repeated failures and silent feeds" },
  { key: "alert_after", env: "CONVEYOR_ALERT_AFTER", flag: "--alert-after", default: "3", describe: "failures in a row before the repeated-failure alert" },
  { key: "silence_alert", env: "CONVEYOR_SILENCE_ALERT", flag: "--silence-alert", default: "off", describe: "alert when a `select: new` import found nothing for this long (e.g. `36h`)" },
  { key: "allow_private_hosts", env: "CONVEYOR_ALLOW_PRIVATE_HOSTS", flag: "--allow-private-hosts", default: "false", describe: "let automations' ftp, ftps, sftp, http and IMAP connections reach private, loopback and link-local addresses (the service's storage and SMTP relay are always reachable)" },
  { key: "storage", env: "CONVEYOR_STORAGE", flag: "--storage", default: "`<data folder>/storage`", describe: "the service's storage for sdsftp and sds3: a folder, `s3://bucket/prefix` or `sftp://user@host/path`", secret: true },
  { key: "concurrency", env: "CONVEYOR_CONCURRENCY", flag: "--concurrency", default: "4", describe: "runs side by side" },
  { key: "bulk_rows", env: "CONVEYOR_BULK_ROWS", flag: "--bulk-rows", default: "5000", describe: "rows per bulk file" },
  { key: "full_run_every", env: "CONVEYOR_FULL_RUN_EVERY", flag: "--full-run-every", default: "24h", describe: "full run interval for scheduled diff runs" },
  { key: "event_catchup", env: "CONVEYOR_EVENT_CATCHUP", flag: "--event-catchup", default: "15m", describe: "how often an order export started by `events` and without a `schedule` runs anyway (a diff run), for orders whose event never came" },
  { key: "push_max_bytes", env: "CONVEYOR_PUSH_MAX_BYTES", flag: "--push-max-bytes", default: "2147483648 (2 GiB)", describe: "largest file `PUT /v3/automations/{custom|installed}/{id}/files/{name}` takes, in bytes (413 past it)" },
  { key: "max_run_time", env: "CONVEYOR_MAX_RUN_TIME", flag: "--max-run-time", default: "2h", describe: "longest run before it is canceled" },
  { key: "run_lease", env: "CONVEYOR_RUN_LEASE", flag: "--run-lease", default: "60s", describe: "with PostgreSQL: a run whose daemon stopped renewing it this long is marked interrupted (at least 20s)" },
  { key: "debug_rows", env: "CONVEYOR_DEBUG_ROWS", flag: "--debug-rows", default: "1000", describe: "mapped records kept in debug files" },
  { key: "debug_file_limit", env: "CONVEYOR_DEBUG_FILE_LIMIT", flag: "--debug-file-limit", default: "64", describe: "with PostgreSQL: largest debug file in MB kept in the database; a larger one (a big feed under `source/`) stays in the run folder of the daemon that ran it" },
  { key: "run_retention", env: "CONVEYOR_RUN_RETENTION", flag: "--run-retention", default: "30d", describe: "run record retention" },
  { key: "console_session", env: "CONVEYOR_CONSOLE_SESSION", flag: "--console-session", default: "12h", describe: "how long a sign-in to the web console lasts" },
  { key: "read_limit", env: "CONVEYOR_READ_LIMIT", flag: "--read-limit", default: "300", describe: "service read requests per minute" },
  { key: "write_limit", env: "CONVEYOR_WRITE_LIMIT", flag: "--write-limit", default: "60", describe: "service write requests per minute" },
  { key: "log_level", env: "CONVEYOR_LOG_LEVEL", flag: "--log-level", default: "info", describe: "fatal, error, warn, info, debug, trace or silent" },
  { key: "public_url", env: "CONVEYOR_PUBLIC_URL", flag: "--public-url", default: "embedded: the daemon's own listen address", describe: "where the service reaches the daemon's webhook intake (`<url>/v3/events/webhook/<key>`); without it and with an external service, no webhook endpoint is registered" },
  { key: "event_window", env: "CONVEYOR_EVENT_WINDOW", flag: "--event-window", default: "5s", describe: "events for one automation within this window start one run" },
];

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
