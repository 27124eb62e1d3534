import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import type { Database } from 'better-sqlite3';
import { WardError, describeError } from '../base/errors.js';
import { LATEST_SCHEMA_VERSION, MIGRATIONS } from './migrations/index.js';

export type { Database };

const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1');
const BUSY_TIMEOUT_MS = 5_000;

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
  if (size === 0) return; // created by SQLite but never written: still empty
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
  const code = (error as { code?: string }).code ?? '';
  if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT' || code.startsWith('SQLITE_CORRUPT')) {
    return new WardError('store_corrupt', `the database file ${file} is corrupt (${describeError(error)}); it was left untouched`, { cause: error });
  }
  return new WardError('store_unavailable', `cannot open the database file ${file}: ${describeError(error)}`, { cause: error });
}

export function readSchemaVersion(db: Database): number {
  return db.pragma('user_version', { simple: true }) as number;
}

/** Opens (creating if needed) a namespace database: validated, WAL, busy timeout, migrated. */
export function openDatabase(file: string, options: OpenOptions = {}): Database {
  const exists = fs.existsSync(file);
  if (exists) assertIntactHeader(file);
  else if (options.readonly) throw new WardError('not_found', `no database at ${file}`);
  else fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });

  let db: Database;
  try {
    db = new BetterSqlite3(file, { readonly: options.readonly ?? false, fileMustExist: exists });
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
