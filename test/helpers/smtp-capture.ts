import type { AddressInfo } from "node:net";
import { simpleParser, type ParsedMail } from "mailparser";
import { SMTPServer } from "smtp-server";

/**
 * A real SMTP server on loopback that requires AUTH (user `mailer`) and keeps
 * every message it receives, parsed: what the notification tests read back.
 */
export class SmtpCapture {
  readonly mails: ParsedMail[] = [];
  port = 0;
  private readonly server: SMTPServer;

  constructor(private readonly password: string) {
    this.server = new SMTPServer({
      disabledCommands: ["STARTTLS"],
      allowInsecureAuth: true,
      onAuth: (auth, _session, cb) => {
        if (auth.username === "mailer" && auth.password === this.password) cb(null, { user: "mailer" });
        else cb(new Error("bad login"));
      },
      onData: (stream, _session, cb) => {
        void simpleParser(stream).then((m) => {
          this.mails.push(m);
          cb();
        }, cb);
      },
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.port = (this.server.server.address() as AddressInfo).port;
    return this;
  }

  /** `CONVEYOR_SMTP_URL` for this server. */
  url(from = "conveyor@shop.test"): string {
    return `smtp://mailer:${this.password}@127.0.0.1:${this.port}?from=${from}`;
  }

  close(): Promise<void> {
    return new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
