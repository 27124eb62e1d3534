import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import type { Database } from 'better-sqlite3';
import { WardError, damagedDatabaseError, describeError } from '../base/errors.js';
import { LATEST_SCHEMA_VERSION, MIGRATIONS } from './migrations/index.js';

export type { Database };

const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1');
const BUSY_TIMEOUT_MS = 5_000;
/** Up to this size the whole file is checked at every open (about 1 ms a MiB); larger ones once a day. */
const CHECK_EVERY_OPEN_BYTES = 16 * 1024 * 1024;
const CHECK_INTERVAL_MS = 24 * 60 * 60_000;

export interface OpenOptions {
  /** Migrate up to this version instead of the latest (migration tests). */
  readonly targetVersion?: number;
  readonly readonly?: boolean;
}

/**
 * Checks the file header before SQLite touches the file, so a corrupt or truncated database
 * is reported with its path and never "repaired" by a write (WAL switch, migration).
 */
function assertIntactHeader(file: string): void {
  let header: Buffer;
  let size: number;
  try {
    const fd = fs.openSync(file, 'r');
    try {
      size = fs.fstatSync(fd).size;
      header = Buffer.alloc(100);
      fs.readSync(fd, header, 0, 100, 0);
    } finally {
      fs.closeSync(fd);
    }
  } catch (error) {
    throw new WardError('store_unavailable', `cannot read the database file ${file}: ${describeError(error)}`, { cause: error });
  }
  // Ward creates a database whole (createDatabase), so an empty one was emptied: refuse, do not re-create.
  if (size === 0) throw new WardError('store_corrupt', `the database file ${file} is empty (0 bytes): it held this namespace's history and was emptied or truncated; it was left untouched`);
  if (size < 100 || !header.subarray(0, 16).equals(SQLITE_MAGIC)) {
    throw new WardError('store_corrupt', `the database file ${file} is not a SQLite database (corrupt or overwritten); it was left untouched`);
  }
  const rawPageSize = header.readUInt16BE(16);
  const pageSize = rawPageSize === 1 ? 65_536 : rawPageSize;
  const pageCount = header.readUInt32BE(28);
  const changeCounter = header.readUInt32BE(24);
  const validFor = header.readUInt32BE(92);
  // The in-header page count is trustworthy when "version-valid-for" matches the change counter.
  if (pageCount > 0 && validFor === changeCounter && size < pageCount * pageSize) {
    throw new WardError(
      'store_corrupt',
      `the database file ${file} is truncated (${size} bytes, expected ${pageCount * pageSize}); it was left untouched`,
    );
  }
}

function wrapSqliteError(file: string, error: unknown): WardError {
  return damagedDatabaseError(error, `the database file ${file}`) ?? new WardError('store_unavailable', `cannot open the database file ${file}: ${describeError(error)}`, { cause: error });
}

export function readSchemaVersion(db: Database): number {
  return db.pragma('user_version', { simple: true }) as number;
}

/**
 * Opens a namespace database: validated, WAL, busy timeout, migrated. Only a file that never
 * existed is created, and it is created whole (made under another name, then renamed), so a
 * crash can never leave an empty or half-made ward.db that a later open would mistake for one.
 */
export function openDatabase(file: string, options: OpenOptions = {}): Database {
  if (!fs.existsSync(file)) {
    if (options.readonly) throw new WardError('not_found', `no database at ${file}`);
    createDatabase(file, options);
  }
  assertIntactHeader(file);

  let db: Database;
  try {
    db = new BetterSqlite3(file, { readonly: options.readonly ?? false, fileMustExist: true });
  } catch (error) {
    throw wrapSqliteError(file, error);
  }
  try {
    const version = readSchemaVersion(db);
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    if (version > LATEST_SCHEMA_VERSION) {
      throw new WardError(
        'store_too_new',
        `the database file ${file} has schema version ${version}, newer than this Ward understands (${LATEST_SCHEMA_VERSION}); upgrade Ward`,
      );
    }
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // Reading commands check too: damage must not read as tampering (`ward verify`) or as a crash.
    checkWhenDue(db, file, options.readonly === true);
    if (!options.readonly) {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      // The journal checkpoints between commits (journal.ts); this is only the backstop (~40 MB).
      db.pragma('wal_autocheckpoint = 10000');
      db.pragma('foreign_keys = ON');
      migrate(db, options.targetVersion ?? LATEST_SCHEMA_VERSION);
    }
    return db;
  } catch (error) {
    db.close();
    if (error instanceof WardError) throw error;
    throw wrapSqliteError(file, error);
  }
}

function createDatabase(file: string, options: OpenOptions): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const making = `${file}.new-${process.pid}`;
  fs.rmSync(making, { force: true });
  const db = new BetterSqlite3(making);
  try {
    fs.chmodSync(making, 0o600);
    db.pragma('journal_mode = WAL');
    migrate(db, options.targetVersion ?? LATEST_SCHEMA_VERSION);
  } finally {
    db.close();
  }
  try {
    // Two processes creating at once: the first rename wins, the second finds a whole database.
    fs.linkSync(making, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw new WardError('store_unavailable', `cannot create the database file ${file}: ${describeError(error)}`, { cause: error });
  } finally {
    fs.rmSync(making, { force: true });
  }
}

/**
 * Damage is found before anything is written into it: the whole file is checked at open while it
 * is small, and once a day after that (the time of the last good check is kept in the file).
 */
function checkWhenDue(db: Database, file: string, readonly: boolean): void {
  const size = fs.statSync(file).size;
  if (size > CHECK_EVERY_OPEN_BYTES) {
    const last = readCheckedAt(db);
    if (last !== null && Date.now() - last < CHECK_INTERVAL_MS) return;
  }
  const result = checkIntegrity(db);
  if (result !== 'ok') throw new WardError('store_corrupt', `the database file ${file} is damaged (${result.slice(0, 300)}); it was left untouched: restore it from a backup, or move it away to start this namespace afresh`);
  if (!readonly && size > CHECK_EVERY_OPEN_BYTES && hasMetaTable(db)) db.prepare("INSERT INTO meta (key, value) VALUES ('integrity_checked_at', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(String(Date.now()));
}

function hasMetaTable(db: Database): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get() !== undefined;
}

function readCheckedAt(db: Database): number | null {
  if (!hasMetaTable(db)) return null;
  const row = db.prepare<[], { value: string }>("SELECT value FROM meta WHERE key = 'integrity_checked_at'").get();
  const value = Number(row?.value);
  return Number.isFinite(value) ? value : null;
}

function migrate(db: Database, target: number): void {
  for (const migration of MIGRATIONS) {
    if (migration.version > target) break;
    // IMMEDIATE: two processes opening a fresh database migrate once, not twice.
    db.transaction(() => {
      if (readSchemaVersion(db) >= migration.version) return;
      migration.up(db);
      db.pragma(`user_version = ${migration.version}`);
    }).immediate();
  }
}

/** Full integrity check for `ward doctor`; O(database size), so not run on every open. */
export function checkIntegrity(db: Database): string {
  const rows = db.pragma('quick_check') as Array<{ quick_check: string }>;
  return rows.map((row) => row.quick_check).join('; ');
}
