import type { RunRecord } from "../state/index.js";

/** Run duration buckets in seconds: a few seconds for a small feed up to max_run_time's default of 2 h. */
const DURATION_BUCKETS = [1, 5, 15, 60, 300, 900, 1800, 3600, 7200];

export interface MetricsSources {
  queueDepth: () => { waiting: number; running: number };
  /** Scheduled automations and their next fire time. */
  nextRuns: () => Array<{ automation: string; next: Date | null }>;
  /** With PostgreSQL: the shared queue of every daemon; the local depth counts only this daemon's runs. */
  clusterDepth?: () => Promise<{ waiting: number; running: number }>;
  now?: () => number;
}

function labels(values: Record<string, string>): string {
  const parts = Object.entries(values).map(([k, v]) => `${k}="${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`);
  return parts.length ? `{${parts.join(",")}}` : "";
}

class Counter {
  private readonly values = new Map<string, { labels: Record<string, string>; value: number }>();

  add(l: Record<string, string>, by = 1): void {
    const key = JSON.stringify(l);
    const entry = this.values.get(key) ?? { labels: l, value: 0 };
    entry.value += by;
    this.values.set(key, entry);
  }

  lines(name: string): string[] {
    return [...this.values.values()].map((e) => `${name}${labels(e.labels)} ${e.value}`);
  }
}

/**
 * The daemon's metrics in the Prometheus text format (`GET /metrics`): runs by
 * outcome, run duration, rows, service requests, API requests, queue depth and
 * the seconds until each automation's next run. Written by hand: a few
 * counters do not need a client library.
 */
export class Metrics {
  private readonly runs = new Counter();
  private readonly rows = new Counter();
  private readonly serviceRequests = new Counter();
  private readonly apiRequests = new Counter();
  private readonly notifications = new Counter();
  private readonly webhooks = new Counter();
  private readonly buckets = DURATION_BUCKETS.map(() => 0);
  private durationSum = 0;
  private durationCount = 0;

  constructor(private readonly sources: MetricsSources) {}

  observeRun(run: RunRecord): void {
    const outcome = run.outcome ?? "unknown";
    this.runs.add({ outcome, mode: run.mode });
    this.rows.add({ mode: run.mode }, run.counts.rows);
    this.serviceRequests.add({ class: "read" }, run.requests.read);
    this.serviceRequests.add({ class: "write" }, run.requests.write);
    if (run.finished) {
      const seconds = Math.max(0, (Date.parse(run.finished) - Date.parse(run.started)) / 1000);
      DURATION_BUCKETS.forEach((le, i) => {
        if (seconds <= le) this.buckets[i] = (this.buckets[i] ?? 0) + 1;
      });
      this.durationSum += seconds;
      this.durationCount += 1;
    }
  }

  observeRequest(method: string, status: number): void {
    this.apiRequests.add({ method, code: String(status) });
  }

  observeNotification(kind: string, ok: boolean): void {
    this.notifications.add({ kind, result: ok ? "sent" : "failed" });
  }

  /** A webhook delivery the intake answered: accepted, duplicate, or why it was refused. */
  observeWebhook(result: string): void {
    this.webhooks.add({ result });
  }

  async render(): Promise<string> {
    const now = this.sources.now?.() ?? Date.now();
    const out: string[] = [];
    const block = (name: string, type: string, help: string, lines: string[]): void => {
      out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, ...lines);
    };
    block("conveyor_runs_total", "counter", "Finished runs by outcome and mode.", this.runs.lines("conveyor_runs_total"));
    const histogram = DURATION_BUCKETS.map((le, i) => `conveyor_run_duration_seconds_bucket{le="${le}"} ${this.buckets[i] ?? 0}`);
    histogram.push(`conveyor_run_duration_seconds_bucket{le="+Inf"} ${this.durationCount}`);
    histogram.push(`conveyor_run_duration_seconds_sum ${this.durationSum}`, `conveyor_run_duration_seconds_count ${this.durationCount}`);
    block("conveyor_run_duration_seconds", "histogram", "Duration of finished runs.", histogram);
    block("conveyor_run_rows_total", "counter", "Rows read by finished runs.", this.rows.lines("conveyor_run_rows_total"));
    block("conveyor_service_requests_total", "counter", "Requests finished runs made to the commerce service, by rate class.", this.serviceRequests.lines("conveyor_service_requests_total"));
    block("conveyor_api_requests_total", "counter", "Requests the daemon's API answered, by method and status.", this.apiRequests.lines("conveyor_api_requests_total"));
    block("conveyor_notifications_total", "counter", "Notification and alert mails, sent or failed.", this.notifications.lines("conveyor_notifications_total"));
    block("conveyor_webhooks_total", "counter", "Webhook deliveries the intake answered, by result.", this.webhooks.lines("conveyor_webhooks_total"));
    const depth = this.sources.queueDepth();
    block("conveyor_queue_depth", "gauge", "Runs waiting and running.", [`conveyor_queue_depth{state="waiting"} ${depth.waiting}`, `conveyor_queue_depth{state="running"} ${depth.running}`]);
    const next = this.sources.nextRuns().flatMap(({ automation, next: at }) =>
      at ? [`conveyor_next_run_seconds${labels({ automation })} ${Math.max(0, Math.round((at.getTime() - now) / 1000))}`] : [],
    );
    block("conveyor_next_run_seconds", "gauge", "Seconds until each scheduled automation's next run.", next);
    if (this.sources.clusterDepth) {
      // A database that does not answer leaves the gauge out of this scrape rather than failing all metrics.
      const shared = await this.sources.clusterDepth().catch(() => null);
      if (shared) block("conveyor_cluster_queue_depth", "gauge", "Runs waiting in and taken from the cluster's shared queue, by every daemon.", [`conveyor_cluster_queue_depth{state="waiting"} ${shared.waiting}`, `conveyor_cluster_queue_depth{state="running"} ${shared.running}`]);
    }
    return `${out.join("\n")}\n`;
  }
}
