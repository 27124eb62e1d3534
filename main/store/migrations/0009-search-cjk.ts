import type { Database } from 'better-sqlite3';
import { indexer, searchableText } from '../search.js';
import { indexedText } from '../search-text.js';

/** Rows read per step, so memory stays bounded for any journal. */
const PAGE = 5_000;

/**
 * E4: text in scripts written without spaces (Chinese, Japanese, Korean) is indexed as pairs of
 * characters from now on (store/search-text.ts). Rows written before hold such a run as one word:
 * each is removed with the text it was indexed with (a contentless index needs it) and written again.
 */
export function updateToSchemaVersion9(db: Database): void {
  const page = db.prepare<[string, number, number], { key: number; conversation_id: string; seq: number; type: string; payload: string }>(
    `SELECT k.key, e.conversation_id, e.seq, e.type, e.payload FROM events AS e JOIN search_keys AS k ON k.conversation_id = e.conversation_id
     WHERE (e.conversation_id, e.seq) > (?, ?) AND e.type IN ('user_prompt', 'assistant_text', 'tool_call', 'tool_result')
     ORDER BY e.conversation_id, e.seq LIMIT ?`,
  );
  const remove = db.prepare<[number, number, string]>("INSERT INTO events_fts (events_fts, rowid, body) VALUES ('delete', (? << 32) | ?, ?)");
  const index = indexer(db);
  let after = { conversationId: '', seq: 0 };
  for (;;) {
    const rows = page.all(after.conversationId, after.seq, PAGE);
    for (const row of rows) {
      let payload: unknown;
      try {
        payload = JSON.parse(row.payload);
      } catch {
        continue; // never indexed
      }
      const body = searchableText(row.type, payload);
      if (body === null || indexedText(body) === body) continue;
      remove.run(row.key, row.seq, body);
      index(row.key, row.seq, body);
    }
    if (rows.length < PAGE) return;
    const last = rows[rows.length - 1]!;
    after = { conversationId: last.conversation_id, seq: last.seq };
  }
}
