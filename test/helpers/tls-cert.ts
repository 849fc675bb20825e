import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/**
 * A throwaway self-signed certificate for 127.0.0.1/localhost, made by openssl
 * at test time so no key is ever committed.
 */
export interface TestCertificate {
  key: string;
  cert: string;
}

let cached: TestCertificate | undefined;

export function selfSignedCertificate(): TestCertificate {
  if (cached) return cached;
  const dir = mkdtempSync(path.join(tmpdir(), "conveyor-cert-"));
  try {
    const key = path.join(dir, "key.pem");
    const cert = path.join(dir, "cert.pem");
    execFileSync(
      "openssl",
      [
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
        "-subj", "/CN=localhost",
        "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
        "-keyout", key, "-out", cert,
      ],
      { stdio: "ignore" },
    );
    cached = { key: readFileSync(key, "utf8"), cert: readFileSync(cert, "utf8") };
    return cached;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
