import type { Logger } from "../log.js";
import type { Db, ServicePaths } from "./db.js";
import type { ItemStore } from "./item-store.js";
import type { JobWaits } from "./job-waits.js";
import type { LogStore } from "./log-store.js";
import type { OrderStore } from "./order-store.js";
import type { Presigner } from "./presign.js";

/**
 * The stores of the embedded service that its background workers (bulk jobs,
 * exports) run on: the part of ServiceContext that does not hold the workers
 * themselves, so the workers and the context do not import each other.
 */
export interface ServiceCore {
  db: Db;
  paths: ServicePaths;
  items: ItemStore;
  orders: OrderStore;
  logs: LogStore;
  presign: Presigner;
  /** Status requests waiting for a bulk job or an export to end. */
  waits: JobWaits;
  logger: Logger;
  now(): number;
}
