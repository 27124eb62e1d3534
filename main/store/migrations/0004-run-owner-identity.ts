import type { Database } from 'better-sqlite3';

/**
 * Runs remember which process owns them by pid *and* that process's start time, so a pid reused
 * after the owner died (common after a reboot) is not mistaken for the owner (R8).
 */
export function updateToSchemaVersion4(db: Database): void {
  db.exec('ALTER TABLE runs ADD COLUMN owner_identity TEXT');
}
