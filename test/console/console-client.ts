import type { TestDaemon } from "../daemon/daemon-harness.js";

/** A console client without a browser: keeps the session cookie, sends forms as a browser would (Origin included). */
export class ConsoleClient {
  cookie = "";

  constructor(private readonly t: TestDaemon) {}

  get origin(): string {
    return this.t.daemon.url;
  }

  async get(path: string): Promise<{ status: number; text: string; headers: Headers }> {
    const res = await fetch(`${this.origin}${path}`, { headers: this.cookie ? { Cookie: this.cookie } : {}, redirect: "manual" });
    return { status: res.status, text: await res.text(), headers: res.headers };
  }

  async post(path: string, form: Record<string, string>, headers: Record<string, string> = { Origin: this.origin }): Promise<{ status: number; text: string; headers: Headers }> {
    const res = await fetch(`${this.origin}${path}`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", ...(this.cookie ? { Cookie: this.cookie } : {}), ...headers },
      body: new URLSearchParams(form).toString(),
      redirect: "manual",
    });
    const setCookie = res.headers.get("set-cookie");
    if (setCookie) this.cookie = setCookie.split(";")[0] ?? "";
    return { status: res.status, text: await res.text(), headers: res.headers };
  }

  async signIn(user: string, token: string): Promise<number> {
    return (await this.post("/sign-in", { user, token })).status;
  }

  /** The CSRF token the pages carry in their forms. */
  async csrf(): Promise<string> {
    const page = await this.get("/automations");
    const match = /name="_csrf" value="([^"]+)"/.exec(page.text);
    if (!match?.[1]) throw new Error(`no CSRF token on /automations (status ${page.status})`);
    return match[1];
  }
}
