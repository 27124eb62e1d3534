import type { Database } from 'better-sqlite3';
import { searchableText, SearchKeys } from '../search.js';

/** Rows read per step while the index is filled, so memory stays bounded for any journal. */
const PAGE = 5_000;

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
  const page = db.prepare<[string, number, number], { conversation_id: string; seq: number; type: string; payload: string }>(
    `SELECT conversation_id, seq, type, payload FROM events
     WHERE (conversation_id, seq) > (?, ?) AND type IN ('user_prompt', 'assistant_text', 'tool_call', 'tool_result')
     ORDER BY conversation_id, seq LIMIT ?`,
  );
  const keys = new SearchKeys(db);
  // The text as it was indexed at version 7; migration 9 respells what holds CJK runs.
  const insert = db.prepare<[number, number, string]>('INSERT INTO events_fts (rowid, body) VALUES ((? << 32) | ?, ?)');
  let after = { conversationId: '', seq: 0 };
  for (;;) {
    const rows = page.all(after.conversationId, after.seq, PAGE);
    for (const row of rows) {
      let payload: unknown;
      try {
        payload = JSON.parse(row.payload);
      } catch {
        continue; // not JSON: nothing to index (verify names such an event)
      }
      const body = searchableText(row.type, payload);
      if (body !== null) insert.run(keys.keyOf(row.conversation_id), row.seq, body);
    }
    if (rows.length < PAGE) return;
    const last = rows[rows.length - 1]!;
    after = { conversationId: last.conversation_id, seq: last.seq };
  }
}
