import { ConveyorError } from "../src/errors.js";

interface S3ErrorShape {
  name?: string;
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
  cause?: { code?: string };
}

const AUTH = new Set(["InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "ExpiredToken", "InvalidToken", "CredentialsProviderError"]);
const NETWORK = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);

/** Maps what the AWS SDK throws to the connector error codes; never carries a credential. */
export function classifyS3Error(err: unknown, what: string, bucket: string): ConveyorError {
  if (err instanceof ConveyorError) return err;
  const e = (err ?? {}) as S3ErrorShape;
  const name = e.name ?? "";
  const code = e.code ?? e.cause?.code ?? "";
  const status = e.$metadata?.httpStatusCode;
  const message = e.message ?? String(err);
  const details = { s3: name || code, ...(status ? { status } : {}) };
  if (name === "NoSuchBucket")
    return new ConveyorError("not_found", `the storage bucket ${bucket} does not exist`, { cause: err, details, hint: "check CONVEYOR_STORAGE (s3://bucket/prefix)" });
  if (name === "NoSuchKey" || name === "NotFound" || status === 404)
    return new ConveyorError("not_found", `${what} does not exist in the storage`, { cause: err, details });
  if (AUTH.has(name) || status === 403 || status === 401)
    return new ConveyorError("auth", `the S3 server refused the credentials for ${what} (${name || status})`, {
      cause: err,
      details,
      hint: "check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
    });
  if (name === "TimeoutError" || code === "ETIMEDOUT" || name === "RequestTimeout")
    return new ConveyorError("timeout", `the S3 server did not answer in time for ${what}`, { cause: err, details, retryable: true });
  if (NETWORK.has(code) || NETWORK.has(name))
    return new ConveyorError("connect", `cannot connect to the S3 server for ${what}: ${message}`, {
      cause: err,
      details,
      retryable: true,
      hint: "check CONVEYOR_S3_ENDPOINT (or AWS_ENDPOINT_URL) and that the server is up",
    });
  if (/certificate|TLS|SSL/i.test(message)) return new ConveyorError("tls", `TLS with the S3 server failed for ${what}: ${message}`, { cause: err, details });
  const retryable = status === undefined || status >= 500 || status === 429;
  return new ConveyorError("transfer", `${what} failed on the S3 server: ${message}`, { cause: err, details, retryable });
}
