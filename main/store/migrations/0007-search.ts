import type { Database } from 'better-sqlite3';
import { SearchKeys } from '../search.js';
import { forEachSearchableEvent } from './searchable-events.js';

/**
 * E4: the full-text index of prompts, answers, tool names and tool previews (store/search.ts),
 * filled from the events already journaled; from here on the journal writes it in each append's
 * transaction. `search_keys` gives each conversation a stable small integer for the index's row
 * ids (an INTEGER PRIMARY KEY, which VACUUM never renumbers).
 */
export function updateToSchemaVersion7(db: Database): void {
  db.exec(`
    CREATE TABLE search_keys (
      key INTEGER PRIMARY KEY,
      conversation_id TEXT NOT NULL UNIQUE REFERENCES conversations(id)
    ) STRICT;
    CREATE VIRTUAL TABLE events_fts USING fts5(body, content = '', columnsize = 0, tokenize = 'unicode61 remove_diacritics 2');
  `);
  const keys = new SearchKeys(db);
  // The text as it was indexed at version 7; migration 9 respells what holds CJK runs.
  const insert = db.prepare<[number, number, string]>('INSERT INTO events_fts (rowid, body) VALUES ((? << 32) | ?, ?)');
  forEachSearchableEvent(db, (conversationId, seq, text) => insert.run(keys.keyOf(conversationId), seq, text));
}
