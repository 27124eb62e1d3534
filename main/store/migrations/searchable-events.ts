import type { Database } from 'better-sqlite3';
import { searchableText } from '../search.js';

/** Rows read per step, so memory stays bounded for any journal. */
const PAGE = 5_000;

/**
 * Visits the searchable text of every journaled event, in journal order, a page at a time (the
 * migrations that fill or respell the search index). An event that is not JSON has none (verify
 * names such an event).
 */
export function forEachSearchableEvent(db: Database, visit: (conversationId: string, seq: number, text: string) => void): void {
  const page = db.prepare<[string, number, number], { conversation_id: string; seq: number; type: string; payload: string }>(
    `SELECT conversation_id, seq, type, payload FROM events
     WHERE (conversation_id, seq) > (?, ?) AND type IN ('user_prompt', 'assistant_text', 'tool_call', 'tool_result')
     ORDER BY conversation_id, seq LIMIT ?`,
  );
  let after = { conversationId: '', seq: 0 };
  for (;;) {
    const rows = page.all(after.conversationId, after.seq, PAGE);
    for (const row of rows) {
      let payload: unknown;
      try {
        payload = JSON.parse(row.payload);
      } catch {
        continue;
      }
      const text = searchableText(row.type, payload);
      if (text !== null) visit(row.conversation_id, row.seq, text);
    }
    if (rows.length < PAGE) return;
    const last = rows[rows.length - 1]!;
    after = { conversationId: last.conversation_id, seq: last.seq };
  }
}
