import type { Database } from 'better-sqlite3';
import { indexer, SearchKeys } from '../search.js';
import { indexedText } from '../search-text.js';
import { forEachSearchableEvent } from './searchable-events.js';

/**
 * E4: text in scripts written without spaces (Chinese, Japanese, Korean) is indexed as pairs of
 * characters from now on (store/search-text.ts). Rows written before hold such a run as one word:
 * each is removed with the text it was indexed with (a contentless index needs it) and written again.
 */
export function updateToSchemaVersion9(db: Database): void {
  const keys = new SearchKeys(db);
  const remove = db.prepare<[number, number, string]>("INSERT INTO events_fts (events_fts, rowid, body) VALUES ('delete', (? << 32) | ?, ?)");
  const index = indexer(db);
  forEachSearchableEvent(db, (conversationId, seq, text) => {
    if (indexedText(text) === text) return;
    const key = keys.keyOf(conversationId);
    remove.run(key, seq, text);
    index(key, seq, text);
  });
}
