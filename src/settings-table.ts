/**
 * The table of worker settings: the config-file key, the environment name, the
 * command-line flag, the default and the README text of each. Apart from
 * config.ts, which parses them with zod, so that building the command line
 * (`conveyor --help` among it) does not load the parser.
 */

export interface SettingSpec {
  key: SettingKey;
  env: string;
  flag: string;
  describe: string;
  default: string;
  secret?: boolean;
}

export type SettingKey =
  | "data_dir"
  | "service_url"
  | "api_user"
  | "api_token"
  | "integration"
  | "database_url"
  | "automations"
  | "listen"
  | "service_listen"
  | "secret_key"
  | "smtp_url"
  | "notify_email"
  | "alert_email"
  | "alert_after"
  | "silence_alert"
  | "allow_private_hosts"
  | "storage"
  | "concurrency"
  | "bulk_rows"
  | "full_run_every"
  | "event_catchup"
  | "push_max_bytes"
  | "max_run_time"
  | "run_lease"
  | "debug_rows"
  | "debug_file_limit"
  | "run_retention"
  | "console_session"
  | "read_limit"
  | "write_limit"
  | "log_level"
  | "public_url"
  | "event_window";

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
