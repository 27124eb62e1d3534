import type { Database } from 'better-sqlite3';

/**
 * Issue 28: the journal is the audit sink's outbox. Per conversation, the last seq the sink took;
 * events after it are the backlog. Written only by the delivery loop, in a transaction of its own.
 */
export function updateToSchemaVersion10(db: Database): void {
  db.exec(`
    CREATE TABLE audit_cursor (
      conversation_id TEXT PRIMARY KEY REFERENCES conversations(id),
      seq INTEGER NOT NULL CHECK (seq >= 0),
      sent_at TEXT NOT NULL
    ) STRICT;
  `);
}
