/**
 * Log records in the seed's shape (v3 part 2.4), as runs add them and searches
 * find them.
 *
 * @module
 */

/** A log record in the seed's shape (v3 part 2.4). */
export interface LogRecord {
  id: string;
  action: string;
  channel_id: string;
  context: string;
  field_data: string;
  identifier: string;
  job_id: string;
  integration: string;
  message: string;
  method: string;
  operation: string;
  request_id: string;
  result: string;
  sd_user_id: string;
  timestamp: string;
  type: string;
  instance: number;
  log_level: number;
  sd_acct_id: number;
}

/**
 * One page of a run's log records given field by field, as a log writer
 * holds them: each field is one value for every record or a value a record,
 * in order, and record i's id is `idPrefix` followed by `idFrom + i`. A store
 * keeps it as it keeps the records it stands for, without an object a record.
 */
export interface LogColumns {
  count: number;
  idPrefix: string;
  idFrom: number;
  fields: { readonly [F in Exclude<keyof LogRecord, "id">]: LogRecord[F] | ReadonlyArray<LogRecord[F]> };
}

/** Log records to add: whole records, or one page of them field by field. */
export type LogBatch = readonly LogRecord[] | LogColumns;

export interface LogQuery {
  start?: number;
  records?: number;
  identifier?: string[];
  context?: string[];
  integration?: string[];
  instance?: number;
  request_id?: string;
  timestamp_start?: string;
  timestamp_end?: string;
  id?: string;
  channel_id?: string;
  action?: string;
  operation?: string;
  method?: string;
  type?: string;
  result?: string;
  job_id?: string;
  /** Only this account's records. */
  account?: string;
  /**
   * Only this run's records (their job_id), as a search field of its own: for
   * Conveyor's own readers (`conveyor logs`), by the job_id index. The seed's
   * API never sets it, so there job_id stays a refinement.
   */
  run?: string;
}

export interface LogPage {
  found: number;
  found_more_logs: boolean;
  logs: LogRecord[];
}
