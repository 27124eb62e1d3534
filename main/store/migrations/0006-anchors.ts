import type { Database } from 'better-sqlite3';

/**
 * J3: after each run the conversation's chain head is anchored with a MAC made with a key that
 * lives in the keychain, not in this file; so a chain rewritten here and recomputed no longer
 * matches its anchors. One row per anchored head. Journals written before anchoring existed get
 * one row without a MAC at their head: what came before it could not be anchored (store/anchors.ts).
 */
export function updateToSchemaVersion6(db: Database): void {
  db.exec(`
    CREATE TABLE anchors (
      conversation_id TEXT NOT NULL REFERENCES conversations(id),
      seq INTEGER NOT NULL CHECK (seq >= 1),
      hash TEXT NOT NULL,
      mac TEXT NOT NULL,
      created_at TEXT NOT NULL,
      PRIMARY KEY (conversation_id, seq)
    ) STRICT, WITHOUT ROWID;

    INSERT INTO anchors (conversation_id, seq, hash, mac, created_at)
      SELECT id, last_seq, last_hash, '', strftime('%Y-%m-%dT%H:%M:%fZ', 'now') FROM conversations WHERE last_seq > 0;
  `);
}
