import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ordinals, startHarness, type Harness } from "./helpers.js";

describe("embedded service: v1 form bodies in every shape clients send", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  const raw = (path: string, body: string, type: string): Promise<Response> =>
    fetch(`${h.svc.url}${path}`, { method: "POST", body, headers: { "content-type": type, "X-Auth-User": h.svc.apiUser, "X-Auth-Token": h.svc.apiToken } });
  const read = async (guid: string): Promise<Record<string, unknown>> => (await h.json("GET", `/v1/editor/items/edit?guid=${guid}`)).body;

  it("reads a multipart form of separate fields", async () => {
    const form = new FormData();
    for (const [k, v] of Object.entries({ identifier: "guid", guid: "MP-1", title: "Multipart", price: "3" })) form.set(k, v);
    const res = await h.call("POST", "/v1/editor/items/add", form);
    expect(((await res.json()) as Record<string, unknown>).result).toBe("success");
    expect(await read("MP-1")).toMatchObject({ title: "Multipart", price: "3" });
  });

  it("reads a JSON object body and a urlencoded json= wrapper", async () => {
    expect((await h.json("POST", "/v1/editor/items/add", { identifier: "guid", guid: "JS-1", title: "Json" })).body.result).toBe("success");
    const wrapped = await h.form("/v1/editor/items/edit", { json: JSON.stringify({ identifier: "guid", guid: "JS-1", color: "red" }) });
    expect(wrapped.body.result).toBe("success");
    expect(await read("JS-1")).toMatchObject({ title: "Json", color: "red" });
  });

  it("reads a urlencoded body sent under a multipart type without a boundary", async () => {
    const res = await raw("/v1/editor/items/add", "identifier=guid&guid=NB-1&title=No+boundary", "multipart/form-data");
    expect(((await res.json()) as Record<string, unknown>).result).toBe("success");
    expect((await read("NB-1")).title).toBe("No boundary");
  });

  it("an empty body is a 400 that says the body has no fields", async () => {
    const res = await h.call("POST", "/v1/editor/items/add", new FormData());
    expect(res.status).toBe(400);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body.result).toBe("failure");
    expect(String(body.message)).toMatch(/no fields/);
  });

  it("a body that cannot be read is a 400 that says so", async () => {
    const broken = await raw("/v1/editor/items/add", '--x\r\nContent-Disposition: form-data; name="guid"\r\n\r\nA', "multipart/form-data; boundary=x");
    expect(broken.status).toBe(400);
    expect(String(((await broken.json()) as Record<string, unknown>).message)).toMatch(/body could not be read/);
    const badJson = await h.form("/v1/editor/items/add", { json: "{not json" });
    expect(badJson.status).toBe(400);
    expect(String(badJson.body.message)).toMatch(/json field is not valid JSON/);
    const array = await h.json("POST", "/v1/editor/items/add", [1, 2]);
    expect(array.status).toBe(400);
    expect(String(array.body.message)).toMatch(/must be an object/);
  });

  it("names the identifier the request named when its field is missing", async () => {
    const res = await h.form("/v1/editor/items/edit", { identifier: "sku", title: "x" });
    expect(res.status).toBe(400);
    expect(String(res.body.message)).toMatch(/identifier=sku but has no sku field/);
  });

  it("a file part on a route that takes none is refused by name", async () => {
    const form = new FormData();
    form.set("identifier", "guid");
    form.set("guid", "F-1");
    form.set("notes", new Blob(["hello"]), "notes.txt");
    const res = await h.call("POST", "/v1/editor/items/add", form);
    expect(res.status).toBe(400);
    expect(String(((await res.json()) as Record<string, unknown>).message)).toMatch(/notes is a file/);
  });

  it("lists what it created", async () => {
    expect(ordinals((await h.json("GET", "/v1/editor/items")).body).length).toBe(3);
  });
});
