import type { Database } from 'better-sqlite3';

/**
 * S5: a stdio connection may run in the OS sandbox with its own profile: the hosts it may reach
 * and its one read-write folder, as JSON (`{"net": [...], "folder": ...}`); NULL = unconfined.
 * Validated again on every read (main/connections/config.ts).
 */
export function updateToSchemaVersion8(db: Database): void {
  db.exec(`
    ALTER TABLE connections ADD COLUMN sandbox TEXT CHECK (sandbox IS NULL OR (json_valid(sandbox) AND length(sandbox) <= 65536));
  `);
}
