import { randomBytes, timingSafeEqual } from "node:crypto";
import type { Db } from "./db.js";

const SCHEMA = `CREATE TABLE IF NOT EXISTS users (
  userpk INTEGER PRIMARY KEY,
  username TEXT NOT NULL UNIQUE,
  token TEXT NOT NULL,
  data TEXT NOT NULL
)`;

/** Roles of v1 part 2; `user` is what a new sub-user gets. */
export const ROLES = ["owner", "admin", "support", "developer", "user"] as const;
export type Role = (typeof ROLES)[number];
/** Who may update another user (v1 part 4.8). */
export const MANAGING_ROLES: readonly string[] = ["owner", "admin", "support", "developer"];
/** Who may add sub-users, change roles and access, and regenerate tokens. */
export const ADMIN_ROLES: readonly string[] = ["owner", "admin"];

/** The account owner's UID: every user of the embedded account has it as `userid`. */
export const OWNER_UID = "1";

export interface User {
  /** 0 for the owner, 1 or greater for a sub-user (its UAID). */
  userpk: number;
  username: string;
  role: Role;
  fields: Record<string, string>;
}

/**
 * The users of the one embedded account: the owner (userpk 0, not stored
 * until its profile changes; its credentials are the service's) and its
 * sub-users, each with a token of its own so a script can try the role rules.
 */
export class UserStore {
  constructor(
    private readonly db: Db,
    private readonly ownerName: string,
  ) {
    db.exec(SCHEMA);
  }

  private row(where: string, value: string | number): User | undefined {
    const row = this.db.prepare(`SELECT userpk, username, data FROM users WHERE ${where} = ?`).get(value) as { userpk: number; username: string; data: string } | undefined;
    if (!row) return undefined;
    const data = JSON.parse(row.data) as { role: Role; fields: Record<string, string> };
    return { userpk: row.userpk, username: row.username, role: data.role, fields: data.fields };
  }

  owner(): User {
    const stored = this.row("userpk", 0);
    return { userpk: 0, username: this.ownerName, role: "owner", fields: stored?.fields ?? {} };
  }

  get(userpk: number): User | undefined {
    return userpk === 0 ? this.owner() : this.row("userpk", userpk);
  }

  byName(username: string): User | undefined {
    return username === this.ownerName ? this.owner() : this.row("username", username);
  }

  /** The sub-user these credentials name, if the token is its own. */
  check(username: string, token: string): User | undefined {
    const row = this.db.prepare("SELECT userpk, token FROM users WHERE username = ? AND userpk > 0").get(username) as { userpk: number; token: string } | undefined;
    if (!row) return undefined;
    const a = Buffer.from(row.token);
    const b = Buffer.from(token);
    return a.length === b.length && timingSafeEqual(a, b) ? this.get(row.userpk) : undefined;
  }

  /** A new sub-user with role `user`; answers it and its token. */
  add(username: string, fields: Record<string, string>): { user: User; token: string } {
    const token = randomBytes(24).toString("hex");
    const next = (this.db.prepare("SELECT COALESCE(MAX(userpk), 0) + 1 AS n FROM users").get() as { n: number }).n;
    this.db.prepare("INSERT INTO users (userpk, username, token, data) VALUES (?, ?, ?, ?)").run(next, username, token, JSON.stringify({ role: "user", fields }));
    return { user: { userpk: next, username, role: "user", fields }, token };
  }

  save(user: User): void {
    const data = JSON.stringify({ role: user.role, fields: user.fields });
    const token = user.userpk === 0 ? "" : undefined;
    this.db
      .prepare("INSERT INTO users (userpk, username, token, data) VALUES (?, ?, ?, ?) ON CONFLICT (userpk) DO UPDATE SET username = excluded.username, data = excluded.data")
      .run(user.userpk, user.userpk === 0 ? `\u0000owner` : user.username, token ?? "", data);
  }

  /** A fresh token for a sub-user; answers it. */
  regenerate(userpk: number): string {
    const token = randomBytes(24).toString("hex");
    this.db.prepare("UPDATE users SET token = ? WHERE userpk = ? AND userpk > 0").run(token, userpk);
    return token;
  }
}

/** Removes a sub-user (its token stops working at once); false when there is none. */
export function removeSubUser(db: Db, userpk: number): boolean {
  return userpk > 0 && db.prepare("DELETE FROM users WHERE userpk = ?").run(userpk).changes > 0;
}
