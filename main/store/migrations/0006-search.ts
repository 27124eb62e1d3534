import type { Database } from 'better-sqlite3';
import { searchableText } from '../search.js';

/** Rows read per step while the index is filled, so memory stays bounded for any journal. */
const PAGE = 5_000;

/**
 * E4: the full-text index of prompts, answers, tool names and tool previews, filled from the
 * events already journaled; from here on the journal writes it in each append's transaction.
 */
export function updateToSchemaVersion6(db: Database): void {
  db.exec(`CREATE VIRTUAL TABLE events_fts USING fts5(body, conversation_id UNINDEXED, seq UNINDEXED, tokenize = 'unicode61 remove_diacritics 2')`);
  const page = db.prepare<[string, number, number], { conversation_id: string; seq: number; type: string; payload: string }>(
    `SELECT conversation_id, seq, type, payload FROM events
     WHERE (conversation_id, seq) > (?, ?) AND type IN ('user_prompt', 'assistant_text', 'tool_call', 'tool_result')
     ORDER BY conversation_id, seq LIMIT ?`,
  );
  const insert = db.prepare('INSERT INTO events_fts (body, conversation_id, seq) VALUES (?, ?, ?)');
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
      if (body !== null) insert.run(body, row.conversation_id, row.seq);
    }
    if (rows.length < PAGE) return;
    const last = rows[rows.length - 1]!;
    after = { conversationId: last.conversation_id, seq: last.seq };
  }
}
