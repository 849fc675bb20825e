import { pino, destination as pinoDestination, stdTimeFunctions, type Logger, type DestinationStream } from "pino";
import { maskDeep, maskSecrets } from "./secrets.js";

export type { Logger };

export interface LoggerOptions {
  level?: string;
  /** Where JSON lines go; standard error by default so `--json` keeps stdout clean. */
  destination?: DestinationStream;
  name?: string;
}

/**
 * A structured JSON-lines logger that cannot print a secret: objects are masked
 * by key before serialisation, and the finished line is masked again by value,
 * so a password pasted into a message or an error is caught as well.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const destination = options.destination ?? pinoDestination({ fd: 2, sync: true });
  return pino(
    {
      name: options.name ?? "conveyor",
      level: options.level ?? process.env.CONVEYOR_LOG_LEVEL ?? "info",
      base: undefined,
      timestamp: stdTimeFunctions.isoTime,
      formatters: {
        level: (label) => ({ level: label }),
        log: (object) => maskDeep(object),
      },
      hooks: {
        streamWrite: (line) => maskSecrets(line),
      },
    },
    destination,
  );
}

/** A logger that drops everything, for library calls where the caller gave none. */
export const silentLogger: Logger = pino({ level: "silent" });
