import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { ParsedMail } from "mailparser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDaemonDb } from "../../src/daemon/daemon-db.js";
import { Notifier } from "../../src/daemon/notify.js";
import { silenceCandidates } from "../../src/daemon/wiring.js";
import { silentLogger } from "../../src/log.js";
import { SmtpCapture } from "../helpers/smtp-capture.js";
import { startTestDaemon, stockDefinition, waitForRun, type TestDaemon } from "./daemon-harness.js";

const SMTP_PASSWORD = "smtp-Pass-31337";
const ENCRYPTED = "very-secret-param-5544";

const smtp = new SmtpCapture(SMTP_PASSWORD);
const mails = smtp.mails;
let t: TestDaemon;
const ids: Record<string, string> = {};

async function mailsTo(address: string, count: number): Promise<ParsedMail[]> {
  const until = Date.now() + 10_000;
  for (;;) {
    const found = mails.filter((m) => m.to && !Array.isArray(m.to) && m.to.text.includes(address));
    if (found.length >= count || Date.now() > until) return found;
    await new Promise((r) => setTimeout(r, 50));
  }
}

function raw(m: ParsedMail): string {
  return `${m.subject ?? ""}\n${m.text ?? ""}\n${(m.attachments ?? []).map((a) => a.content.toString("utf8")).join("\n")}`;
}

beforeAll(async () => {
  await smtp.start();
  t = await startTestDaemon({
    env: { CONVEYOR_SMTP_URL: smtp.url(), CONVEYOR_ALERT_EMAIL: "alerts@shop.test", CONVEYOR_ALERT_AFTER: "2" },
    definitions: {
      "bad.json": {
        ...stockDefinition({ name: "Bad rows" }),
        file_configs: [{ name: "bad\\.csv", min_age: 0, field_map: { sku: "sku", stock: "qty" }, identifier: "sku", update: "edit", error_limit: "50%" }],
        parameters: [{ name: "token", value: ENCRYPTED, encrypted: true, required: false }],
      },
      "missing.json": { ...stockDefinition({ name: "Missing feed" }), connection: { type: "sdsftp", path: "nowhere" } },
    },
  });
  const root = path.join(t.settings.storage, "demo", "feeds");
  mkdirSync(root, { recursive: true });
  writeFileSync(path.join(root, "bad.csv"), "sku,qty\nA1,5\n,7\nB2,9\n");
  const list = await t.request("GET", "/v3/automations/custom");
  for (const a of list.body.automations as Array<{ id: string; slug: string }>) ids[a.slug] = a.id;
});

afterAll(async () => {
  await t.close();
  await smtp.close();
});

describe("notifications over SMTP", () => {
  it("sends the notify summary to the run's email: outcome, counts, first errors, errors.csv attached, no secret", async () => {
    const res = await t.request("GET", `/v3/automations/custom/${ids["bad-rows"]}/run?debug=1&notify=1&email=ops@shop.test`);
    const run = await waitForRun(t, String(res.body.id));
    expect(run.outcome).toBe("partial");
    const [mail] = await mailsTo("ops@shop.test", 1);
    expect(mail?.subject).toBe("[conveyor] Bad rows: partial");
    expect(mail?.text).toContain(`Run: ${String(res.body.id)}`);
    expect(mail?.text).toContain("Rows read: 3, row errors: 1");
    expect(mail?.text).toMatch(/First lines of errors\.csv[\s\S]*3,/);
    expect(mail?.attachments.map((a) => a.filename)).toEqual(["errors.csv"]);
    const text = raw(mail as ParsedMail);
    for (const secret of [SMTP_PASSWORD, ENCRYPTED, t.headers["X-Auth-Token"] ?? "?"]) expect(text).not.toContain(secret);
  });

  it("alerts alert_email on a failed run, and once more at alert_after failures in a row", async () => {
    for (let i = 0; i < 3; i++) {
      const res = await t.request("GET", `/v3/automations/custom/${ids["missing-feed"]}/run`);
      expect((await waitForRun(t, String(res.body.id))).outcome).toBe("failed");
    }
    const alerts = await mailsTo("alerts@shop.test", 4);
    const subjects = alerts.map((m) => m.subject);
    expect(subjects.filter((s) => s === "[conveyor] ALERT: Missing feed failed")).toHaveLength(3);
    expect(subjects.filter((s) => s === "[conveyor] ALERT: Missing feed failed 2 times in a row")).toHaveLength(1);
    for (const m of alerts) expect(raw(m)).not.toContain(SMTP_PASSWORD);
  });

  it("records notify_failed on the run, and keeps going, when no SMTP server is set", async () => {
    const saved = t.settings.smtpUrl;
    t.settings.smtpUrl = undefined;
    try {
      const res = await t.request("GET", `/v3/automations/custom/${ids["bad-rows"]}/run?debug=1&notify=true&email=ops@shop.test`);
      const run = await waitForRun(t, String(res.body.id));
      await new Promise((r) => setTimeout(r, 200));
      const again = await t.request("GET", `/v3/automations/runs/${String(res.body.id)}`);
      expect(run.outcome).toBe("partial");
      expect(again.body.error).toMatchObject({ code: "notify_failed", message: expect.stringContaining("CONVEYOR_SMTP_URL") });
    } finally {
      t.settings.smtpUrl = saved;
    }
    expect((await t.request("GET", "/healthz", undefined, {})).status).toBe(200);
  });

  it("sends the silence alert once for a select:new feed that found nothing for silence_alert", async () => {
    const db = openDaemonDb(t.settings, t.daemon.store);
    const later = new Date(Date.now() + 3 * 3600_000);
    const notifier = new Notifier({ settings: { ...t.settings, silenceAlertMs: 3600_000 }, store: t.daemon.store, db, logger: silentLogger, now: () => later });
    const before = (await mailsTo("alerts@shop.test", 0)).length;
    const candidates = (await silenceCandidates(t.daemon.definitions)).map((c) => ({
      ...c,
      automation: { ...c.automation, file_configs: c.automation.file_configs.map((f) => ({ ...f, select: "new" as const })) },
    }));
    const sent = await notifier.checkSilence(candidates.filter((c) => c.name === "Missing feed"));
    expect(sent).toBe(1);
    expect(await notifier.checkSilence(candidates.filter((c) => c.name === "Missing feed"))).toBe(0);
    const alerts = await mailsTo("alerts@shop.test", before + 1);
    expect(alerts.at(-1)?.subject).toBe("[conveyor] ALERT: no new file for Missing feed for 1 hour");
    await db.close();
  });
});
