import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHarness, type Harness } from "./helpers.js";
import { SdkReplay } from "./sdk-compat-client.js";

type Body = Record<string, unknown>;

/** Sub-user sign-in, v1 log search bodies, the bulk item POST and media slots (issue #31, second pass). */
describe("embedded service: sub-user auth, log bodies, bulk items, media files", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
    await h.form("/v1/editor/items/add", { identifier: "guid", guid: "LG-1", title: "Logged" });
  });
  afterAll(() => h.close());

  const read = async (res: Response): Promise<{ status: number; body: Body }> => ({ status: res.status, body: (await res.json()) as Body });

  it("GET /v1/auth answers a sub-user's own profile, and a sub-user signs in with its token", async () => {
    const add = await h.json("POST", "/v1/profile/add", { username: "clerk1", name: "Clerk" });
    const token = String(add.body.token);
    const mine = await read(await fetch(`${h.svc.url}/v1/auth`, { headers: { "X-Auth-User": "clerk1", "X-Auth-Token": token } }));
    expect(mine.status).toBe(200);
    expect(mine.body).toMatchObject({ result: "success", user: "clerk1", username: "clerk1", role: "user", userid: "1", userpk: add.body.userpk, name: "Clerk" });
    expect(mine.body.token).toBeUndefined();
    const byQuery = await read(await fetch(`${h.svc.url}/v1/auth?apiuser=clerk1`, { headers: { "X-Auth-Token": token } }));
    expect(byQuery.body).toMatchObject({ username: "clerk1", role: "user" });
    const owner = await h.json("GET", "/v1/auth");
    expect(owner.body).toMatchObject({ username: h.svc.apiUser, role: "owner", userpk: 0, userid: "1" });
    const signIn = await new SdkReplay(h.svc.url, "clerk1", token).authenticate("clerk1", token);
    expect(signIn).toMatchObject({ status: 200, body: { token, username: "clerk1", role: "user" } });
    const wrong = await new SdkReplay(h.svc.url, "clerk1", token).authenticate("clerk1", h.svc.apiToken);
    expect(wrong.status).toBe(401);
  });

  it("POST /v1/logs reads multipart fields and the json= wrapper like the other v1 forms", async () => {
    const found = (body: Body): unknown => (body.results as Body | undefined)?.found;
    const multipart = new FormData();
    multipart.set("identifier", "LG-1");
    expect(found((await read(await h.call("POST", "/v1/logs", multipart))).body)).toBe(1);
    const wrapped = new FormData();
    wrapped.set("json", JSON.stringify({ identifier: "LG-1", action: "add" }));
    expect(found((await read(await h.call("POST", "/v1/logs", wrapped))).body)).toBe(1);
    expect(found((await h.form("/v1/logs", { json: JSON.stringify({ identifier: "LG-1" }) })).body)).toBe(1);
    const broken = await h.form("/v1/logs", { json: "{not json" });
    expect(broken.status).toBe(400);
    expect(String(broken.body.message)).toMatch(/json field is not valid JSON/);
  });

  it("the bulk-shaped POST /v1/editor/items answers that the sandbox does not guess its fields", async () => {
    for (const url of ["/v1/editor/items", "/v1/editor/items/", "/v1/editor/items?importmedia=1"]) {
      const res = await h.json("POST", url, { 1: { identifier: "guid", guid: "B-1", title: "x" } });
      expect(res.status, url).toBe(501);
      expect(res.body).toMatchObject({ result: "failure", sandbox: true });
      expect(String(res.body.message)).toContain("/v1/editor/items/add");
    }
    expect((await h.json("GET", "/v1/editor/items/edit?guid=B-1")).body).not.toHaveProperty("guid");
  });

  it("a file in a media slot is refused by name and told to send the image's URL", async () => {
    const form = new FormData();
    form.set("identifier", "guid");
    form.set("guid", "M-1");
    form.set("title", "With image");
    form.set("media1", new Blob(["JPEG"], { type: "image/jpeg" }), "a.jpg");
    const res = await read(await h.call("POST", "/v1/editor/items/add", form));
    expect(res.status).toBe(400);
    expect(String(res.body.message)).toMatch(/media1 is a file; POST \/v1\/editor\/items\/add takes text fields only: media1 takes an image URL/);
    const urls = await h.form("/v1/editor/items/add", { identifier: "guid", guid: "M-1", title: "With image", media1: "https://img.example/a.jpg" });
    expect(urls.body).toMatchObject({ result: "success", item: { media1: "https://img.example/a.jpg" } });
  });

  it("the client's password help calls answer the sandbox envelope", async () => {
    const sdk = new SdkReplay(h.svc.url, h.svc.apiUser, h.svc.apiToken);
    for (const url of ["v1/auth/forgot", "v1/auth/assist"]) {
      const res = await sdk.get(url, { email: "a@example.com" });
      expect(res.status, url).toBe(501);
      expect(res.body).toMatchObject({ result: "failure", sandbox: true });
    }
  });
});
