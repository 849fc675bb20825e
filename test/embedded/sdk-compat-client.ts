/**
 * The requests of the service's official client, replayed as it sends them
 * (written from reading it; its code is not here): credentials in
 * `X-Auth-User` (with a trailing space) and `X-Auth-Token`, and a
 * `Content-Type: multipart/form-data` header on every call but sign-in —
 * without a body on GETs (parameters go to the query string), with a
 * urlencoded body and no boundary on plain POSTs, and as a real multipart form
 * of one field `json=<record as JSON>` on record writes.
 */
export interface SdkReply {
  status: number;
  body: Record<string, unknown>;
}

export class SdkReplay {
  constructor(
    private readonly base: string,
    private readonly user: string,
    private readonly token: string,
  ) {}

  private headers(): Record<string, string> {
    return { "Content-Type": "multipart/form-data", "X-Auth-User": `${this.user} `, "X-Auth-Token": this.token };
  }

  private async send(url: string, init: RequestInit): Promise<SdkReply> {
    const res = await fetch(`${this.base}/${url}`, init);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  /** Query-string encoding as the client's form encoder does it: spaces as `+`, the rest %-escaped, `*` included. */
  static encode(params: Record<string, string>): string {
    return new URLSearchParams(params).toString().replace(/\*/g, "%2A");
  }

  /** Sign-in: urlencoded `user` and `pass`, no credentials. */
  authenticate(user: string, pass: string): Promise<SdkReply> {
    return this.send("v1/auth", { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: SdkReplay.encode({ user, pass }) });
  }

  get(url: string, params: Record<string, string> = {}): Promise<SdkReply> {
    const query = Object.keys(params).length ? `?${SdkReplay.encode(params)}` : "";
    return this.send(`${url}${query}`, { method: "GET", headers: this.headers() });
  }

  /** A plain POST: urlencoded body under a multipart content type that names no boundary. */
  post(url: string, params: Record<string, string>): Promise<SdkReply> {
    return this.send(url, { method: "POST", headers: this.headers(), body: SdkReplay.encode(params) });
  }

  /** A record write: a real multipart form (the transport adds the boundary) of one field `json`. */
  postRecord(url: string, record: unknown): Promise<SdkReply> {
    const form = new FormData();
    form.set("json", JSON.stringify(record));
    const headers = this.headers();
    delete (headers as Partial<Record<string, string>>)["Content-Type"];
    return this.send(url, { method: "POST", headers, body: form });
  }

  /** The search path: the parameters query-encoded, `=` turned into `:=`, and the same parameters again as the query string. */
  search(type: string, params: Record<string, string>): Promise<SdkReply> {
    const path = Object.keys(params).length ? `/${SdkReplay.encode(params).replace(/=/g, ":=")}` : "";
    return this.get(`v1/search/${type}${path}`, params);
  }
}
