import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createConnector } from "../../connectors/index.js";
import { capturingContext } from "./conformance-kit.js";
import { connectorConformance } from "./conformance.js";
import { ftpTarget } from "./ftp-target.js";

const refuseSelfSigned = [{ name: "self-signed certificate with validate on", overrides: { validate: true }, code: "tls" as const }];

connectorConformance("ftps explicit", async () => ({
  ...(await ftpTarget("explicit", { type: "ftps", validate: false })),
  refusals: refuseSelfSigned,
}));

connectorConformance("ftps implicit", async () => ({
  ...(await ftpTarget("implicit", { type: "ftps", implicit_tls: true, validate: false })),
  refusals: refuseSelfSigned,
}));

describe("ftp with ssl_ftp", () => {
  let target: Awaited<ReturnType<typeof ftpTarget>>;
  beforeAll(async () => {
    target = await ftpTarget("explicit", { type: "ftp", ssl_ftp: true, validate: false });
  });
  afterAll(async () => target.close());

  it("upgrades the control connection with AUTH TLS before logging in", async () => {
    const connector = createConnector(target.connection, capturingContext().context);
    const result = await connector.test();
    await connector.close();
    expect(result.facts.tls).toMatch(/^TLSv1\.[23]$/);
  });

  it("stays in the clear without ssl_ftp", async () => {
    const connector = createConnector({ ...target.connection, ssl_ftp: false }, capturingContext().context);
    const result = await connector.test();
    await connector.close();
    expect(result.facts.tls).toBe("none");
  });
});
