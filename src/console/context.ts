import type { FastifyRequest } from "fastify";
import type { ApiContext } from "../daemon/api/context.js";
import type { SessionRows } from "../daemon/daemon-db.js";
import { ConveyorError } from "../errors.js";
import type { RateUsage } from "../service/limiter.js";

/** What the console's pages read besides the API's parts: sessions, the scheduler, the limiter, the cluster. */
export interface ConsoleContext extends ApiContext {
  sessions: SessionRows;
  /** The scheduler's next fire time of an automation (its key: the id as text); null when it is not scheduled. */
  nextFire: (key: string) => Date | null;
  /** Requests to the service granted to the account in the last minute, per class; absent when the limiter cannot tell. */
  rateUsage?: (account: string) => Promise<{ read: RateUsage; write: RateUsage }>;
  /** Several daemons on PostgreSQL: the shared queue and the runs each daemon holds. */
  cluster?: {
    daemon: string;
    depth(): Promise<{ waiting: number; running: number }>;
    running(): Promise<Array<{ daemon: string; running: number }>>;
  };
  /** Sign-in attempts per minute and remote address (default 20). */
  signInLimit?: number;
}

/** The signed-in account of a console request, set by `requireSession`; `csrf` goes into every form. */
export interface ConsoleSession {
  account: string;
  csrf: string;
}

declare module "fastify" {
  interface FastifyRequest {
    /** Set by the console's `requireSession` preHandler. */
    consoleSession?: ConsoleSession;
  }
}

/** The session of a request that passed `requireSession`; a route without it is a programming mistake. */
export function sessionOf(request: FastifyRequest): ConsoleSession {
  const session = request.consoleSession;
  if (!session) throw new ConveyorError("internal", `console route ${request.url.split("?")[0]} was registered without requireSession`);
  return session;
}
