import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync } from "node:fs";
import path from "node:path";
import { isMainThread } from "node:worker_threads";
import { ConveyorError } from "../errors.js";

/**
 * The data folder holds the state database, the key files, run work folders,
 * debug files and the account's storage: secrets and merchant data, private to
 * the daemon's user. Modes are set explicitly rather than trusted to the
 * umask the process inherited (a service manager's 022 gives 0644 files).
 */

export const PRIVATE_FILE = 0o600;
export const PRIVATE_DIR = 0o700;

/**
 * Every file and folder the process creates from now on is private, whatever
 * code creates it (SQLite, the connectors' downloads, the debug writers). A
 * worker thread may not change the umask; it shares the main thread's.
 */
export function privateUmask(): void {
  if (isMainThread) process.umask(0o077);
}

function narrow(file: string, mode: number): void {
  try {
    const stat = lstatSync(file);
    // A link is not followed: its target may be anything, anywhere.
    if (stat.isSymbolicLink()) return;
    // A sticky folder (/tmp) is shared by design; it is never ours to narrow.
    if ((stat.mode & 0o1000) !== 0) return;
    if ((stat.mode & 0o777 & ~mode) !== 0) chmodSync(file, stat.mode & 0o777 & mode);
  } catch (err) {
    // Gone between the listing and the check (a run folder removed by retention): nothing to narrow.
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw new ConveyorError("state", `cannot make ${file} private to this user (mode ${mode.toString(8)}): ${(err as Error).message}`, {
      cause: err,
      hint: `run Conveyor as the user that owns the data folder, or give it that mode yourself (chmod ${mode.toString(8)})`,
    });
  }
}

/** A folder the process makes: created 0700; an existing one is left as it is (it may be a shared parent). */
export function makePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR });
}

/** A folder of the daemon's own (the data folder, the embedded service's): created 0700, an existing one narrowed to it. */
export function privateDir(dir: string): void {
  makePrivateDir(dir);
  narrow(dir, PRIVATE_DIR);
}

/** An existing file narrowed to 0600 (execute bits are dropped with the rest). */
export function privateFile(file: string): void {
  narrow(file, PRIVATE_FILE);
}

/**
 * A SQLite database and its write-ahead log and shared memory index. SQLite
 * gives the -wal and -shm files the database file's mode when it creates
 * them, so the database is narrowed first; ones left by an earlier start are
 * narrowed too.
 */
export function privateSqlite(file: string): void {
  for (const suffix of ["", "-wal", "-shm", "-journal"]) privateFile(file + suffix);
}

/** What Conveyor keeps directly in its data folder; anything else there is someone else's. */
const OWN_ENTRIES = /^(state\.db|scheduler\.db)(-wal|-shm|-journal)?$|^(secret\.key|daemon\.pid|embedded|runs|storage|\.sample-products-loaded)$/;

/**
 * At start: the data folder 0700 and Conveyor's own entries in it narrowed
 * (files 0600, folders 0700). Deeper entries need no walk: nobody else can
 * pass a 0700 folder, and a large run history would make every start slow.
 * Other entries keep their modes: a data folder set to a shared parent (a
 * home folder, a test run's temp root) must not have its neighbours' files
 * changed.
 */
export function tightenDataDir(dataDir: string): void {
  privateDir(dataDir);
  for (const entry of readdirSync(dataDir, { withFileTypes: true })) {
    if (!OWN_ENTRIES.test(entry.name)) continue;
    const full = path.join(dataDir, entry.name);
    if (entry.isDirectory()) narrow(full, PRIVATE_DIR);
    else if (entry.isFile()) narrow(full, PRIVATE_FILE);
  }
}

/**
 * A local storage folder (not `s3://` nor `sftp://`). One inside the data
 * folder is narrowed with it; one set elsewhere is created private but an
 * existing one keeps its mode, since whoever set it up may share it on
 * purpose (an SFTP server serving the same folder to the merchant).
 */
export function privateStorage(storage: string): void {
  if (/^[a-z0-9]+:\/\//i.test(storage)) return;
  if (existsSync(storage)) return;
  mkdirSync(storage, { recursive: true, mode: PRIVATE_DIR });
}
