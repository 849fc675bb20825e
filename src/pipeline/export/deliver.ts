/**
 * Step 6 of an export run. Files go through `connector.upload`, which is
 * atomic for every file connection (ftp, ftps, sftp, sdsftp, sds3: a
 * temporary `.<name>.part`, size check, rename; a failure leaves nothing under
 * the final name), one request for http, one message with the file attached
 * for e-mail. An http export with `payload_multi: 0` sends one request per
 * record instead, each with its own result: a record the partner refuses is
 * reported and kept out of the snapshot, the others count as delivered.
 *
 * @module
 */

import { createReadStream, createWriteStream, type WriteStream } from "node:fs";
import { once } from "node:events";
import { createInterface } from "node:readline";
import type { Connector, UploadAbout } from "../../../connectors/types.js";
import { RenderedBody } from "../../../connectors/rendered-body.js";
import { ConveyorError } from "../../errors.js";
import type { RenderedFile } from "./render.js";
import type { LogWriter } from "../logs.js";

/** Records per `sendRecords` call: bounds memory, not the number of requests (one per record). */
const SEND_BATCH = 100;

export interface SpooledRecord {
  /** Snapshot identifier: a failed send keeps this one out of the commit. */
  id: string;
  key: string;
  record: Record<string, string>;
  /** The record's render when the export has a template: sent instead of the record as JSON. */
  body?: string;
}

/** The records of a per-record http export, kept on disk between rendering and sending. */
export class RecordSpool {
  private readonly out: WriteStream;
  private readonly closed: Promise<unknown>;

  constructor(readonly localPath: string) {
    this.out = createWriteStream(localPath);
    this.closed = once(this.out, "close");
  }

  async add(entry: SpooledRecord): Promise<void> {
    if (!this.out.write(`${JSON.stringify(entry)}\n`)) await once(this.out, "drain");
  }

  async close(): Promise<void> {
    if (!this.out.closed) {
      this.out.end();
      await this.closed;
    }
  }

  async *batches(size = SEND_BATCH): AsyncGenerator<SpooledRecord[]> {
    await this.close();
    let batch: SpooledRecord[] = [];
    for await (const line of createInterface({ input: createReadStream(this.localPath), crlfDelay: Infinity })) {
      if (line === "") continue;
      batch.push(JSON.parse(line) as SpooledRecord);
      if (batch.length >= size) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length) yield batch;
  }
}

export interface Delivery {
  /** Records (per-record http) or rows (a file) delivered. */
  delivered: number;
  /** Snapshot identifiers whose record the partner refused. */
  failedIds: Set<string>;
  failedRecords: number;
  bytes: number;
}

export async function deliverFile(connector: Connector, file: RenderedFile, about: UploadAbout): Promise<Delivery> {
  const { size } = await connector.upload(file.localPath, file.name, about);
  if (size !== file.bytes) {
    throw new ConveyorError("transfer", `${file.name}: ${size} bytes delivered, ${file.bytes} written`, { retryable: true, hint: "Run the export again." });
  }
  return { delivered: file.rows, failedIds: new Set(), failedRecords: 0, bytes: size };
}

export async function deliverRecords(connector: Connector, spool: RecordSpool, logs: LogWriter | null): Promise<Delivery> {
  if (!connector.sendRecords) {
    throw new ConveyorError("definition_invalid", `payload_multi: 0 sends one request per record, which a ${connector.type} connection cannot do`, {
      details: { field: "payload_multi" },
      hint: "Use payload_multi: 1, or an http connection.",
    });
  }
  const result: Delivery = { delivered: 0, failedIds: new Set(), failedRecords: 0, bytes: 0 };
  for await (const batch of spool.batches()) {
    const answers = await connector.sendRecords(batch.map((b) => (b.body === undefined ? b.record : new RenderedBody(b.body))));
    for (const answer of answers) {
      const sent = batch[answer.index];
      if (!sent) continue;
      if (answer.ok) {
        result.delivered++;
        logs?.add({ action: "export", identifier: sent.key, result: "success", message: { status: answer.status ?? null } });
      } else {
        result.failedRecords++;
        result.failedIds.add(sent.id);
        logs?.add({ action: "export", identifier: sent.key, result: "error", message: { status: answer.status ?? null, error: answer.error ?? "refused" } });
      }
    }
  }
  return result;
}
