/**
 * Search across a namespace's conversations (E4): an SQLite FTS5 index of what people look for —
 * prompts, answers, tool names and tool previews — one row per event, written in the append's
 * transaction (journal.ts) and filled for older journals by migration 7. The index keeps no copy
 * of the text (contentless, no column sizes: the cheapest FTS5 row to write, since every append
 * pays for it); a hit's row id names its event (`search_keys.key << 32 | seq`), and its snippet is
 * cut from the event itself. What a person types is searched as words (search-text.ts), never
 * read as FTS5 syntax it might not parse, and goes in as a bound parameter.
 */
import type { Database, Statement } from 'better-sqlite3';
import { WardError } from '../base/errors.js';
import { ftsExpression, indexedText, queryTerms, textUnits } from './search-text.js';

export const MAX_SEARCH_QUERY_CHARS = 200;
export const MAX_SEARCH_RESULTS = 100;
const MAX_SEARCH_OFFSET = 10_000;
/** Tokens shown before and after the first match in a snippet. */
const SNIPPET_BEFORE = 6;
const SNIPPET_AFTER = 12;
/** A snippet is looked for in this much of an event's text. */
const SNIPPET_SCAN_CHARS = 100_000;

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/**
 * What of an event is searchable, or null for events nobody searches (streamed deltas, which
 * their final text repeats; decisions; usage). Reads the payload as written by its producer.
 */
export function searchableText(type: string, payload: unknown): string | null {
  if (payload === null || typeof payload !== 'object') return null;
  const fields = payload as Record<string, unknown>;
  let found: string;
  switch (type) {
    case 'user_prompt':
    case 'assistant_text':
      found = text(fields.text);
      break;
    case 'tool_call':
      found = text(fields.tool);
      break;
    case 'tool_result':
      found = `${text(fields.tool)}\n${text(fields.preview)}`;
      break;
    default:
      return null;
  }
  return found.trim() === '' ? null : found;
}

/** The small integer that stands for a conversation in the index's row ids; made on first use. */
export class SearchKeys {
  private readonly select: Statement<[string], { key: number }>;
  private readonly insert: Statement<[string]>;

  constructor(db: Database) {
    this.select = db.prepare('SELECT key FROM search_keys WHERE conversation_id = ?');
    this.insert = db.prepare('INSERT INTO search_keys (conversation_id) VALUES (?)');
  }

  keyOf(conversationId: string): number {
    return this.select.get(conversationId)?.key ?? Number(this.insert.run(conversationId).lastInsertRowid);
  }
}

/** Adds one event's searchable text to the index (in the caller's transaction), as search-text.ts spells it. */
export function indexer(db: Database): (key: number, seq: number, text: string) => void {
  const insert = db.prepare<[number, number, string]>('INSERT INTO events_fts (rowid, body) VALUES ((? << 32) | ?, ?)');
  return (key, seq, text) => insert.run(key, seq, indexedText(text));
}

export interface SnippetPart {
  readonly text: string;
  readonly match: boolean;
}

export interface SearchHit {
  readonly conversationId: string;
  readonly seq: number;
  readonly type: string;
  readonly createdAt: string;
  /** The matching passage, the matched words marked. */
  readonly snippet: readonly SnippetPart[];
}

export interface SearchOptions {
  readonly limit?: number;
  readonly offset?: number;
}

function fold(word: string): string {
  return word.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
}

/** The passage around the first matched word, the matched words marked (what FTS5's snippet() does for a table that keeps its text). */
export function snippetOf(body: string, query: string): SnippetPart[] {
  // Every word of a phrase is marked where it stands, as FTS5's snippet() marks phrase tokens.
  const terms = queryTerms(query).flatMap((term) => term.units.map((unit, index) => ({ word: fold(unit), prefix: term.prefix && index === term.units.length - 1 })));
  const scanned = body.slice(0, SNIPPET_SCAN_CHARS);
  const tokens = textUnits(scanned).map((unit) => {
    const folded = fold(unit.text);
    return { start: unit.start, end: unit.end, match: terms.some((term) => (term.prefix ? folded.startsWith(term.word) : folded === term.word)) };
  });
  const first = tokens.findIndex((token) => token.match);
  const from = Math.max(0, (first === -1 ? 0 : first) - SNIPPET_BEFORE);
  const to = Math.min(tokens.length, (first === -1 ? 0 : first) + SNIPPET_AFTER);
  if (tokens.length === 0) return [{ text: scanned.slice(0, 120), match: false }];
  const parts: SnippetPart[] = [];
  let at = from === 0 ? 0 : tokens[from]!.start;
  if (from > 0) parts.push({ text: '…', match: false });
  for (const token of tokens.slice(from, to)) {
    if (!token.match) continue;
    if (token.start > at) parts.push({ text: scanned.slice(at, token.start), match: false });
    // Bigrams of a CJK run overlap: a marked pair continues where the one before it ended.
    if (token.end > at) parts.push({ text: scanned.slice(Math.max(at, token.start), token.end), match: true });
    at = Math.max(at, token.end);
  }
  const end = to === tokens.length ? scanned.length : tokens[to - 1]!.end;
  if (end > at) parts.push({ text: scanned.slice(at, end), match: false });
  if (to < tokens.length || scanned.length < body.length) parts.push({ text: '…', match: false });
  // Adjacent parts of a kind read as one (marked CJK pairs touch).
  return parts.reduce<SnippetPart[]>((joined, part) => {
    const last = joined[joined.length - 1];
    if (last !== undefined && last.match === part.match) joined[joined.length - 1] = { text: last.text + part.text, match: part.match };
    else joined.push(part);
    return joined;
  }, []);
}

type HitRow = [string, number, string, string, string];

export class SearchIndex {
  private readonly select: Statement<[string, number, number], HitRow>;

  constructor(db: Database) {
    // Ranked and cut inside FTS5 first, so only a page of rows is joined to its events.
    this.select = db
      .prepare<[string, number, number], HitRow>(
        `SELECT k.conversation_id, e.seq, e.type, e.created_at, e.payload FROM (
           SELECT rowid, rank FROM events_fts WHERE events_fts MATCH ? ORDER BY rank LIMIT ? OFFSET ?
         ) AS hit
         JOIN search_keys AS k ON k.key = hit.rowid >> 32
         JOIN events AS e ON e.conversation_id = k.conversation_id AND e.seq = hit.rowid & 4294967295
         ORDER BY hit.rank`,
      )
      .raw(true);
  }

  /** Best matches first (bm25), one page. */
  query(query: string, options: SearchOptions = {}): SearchHit[] {
    const limit = options.limit ?? 20;
    const offset = options.offset ?? 0;
    if (query.trim() === '') throw new WardError('usage', 'the search query is empty');
    if (query.length > MAX_SEARCH_QUERY_CHARS) throw new WardError('usage', `the search query is longer than ${MAX_SEARCH_QUERY_CHARS} characters`);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_RESULTS) throw new WardError('usage', `a search returns 1 to ${MAX_SEARCH_RESULTS} results at a time`);
    if (!Number.isInteger(offset) || offset < 0 || offset > MAX_SEARCH_OFFSET) throw new WardError('usage', `a search skips at most ${MAX_SEARCH_OFFSET} results`);
    const expression = ftsExpression(query);
    if (expression === null) throw new WardError('usage', `the search query ${JSON.stringify(query.slice(0, 60))} has no word to look for: a word is letters or digits`);
    // Built by ftsExpression: always FTS5 syntax, and a bound parameter, never SQL.
    const rows = this.select.all(expression, limit, offset);
    return rows.map(([conversationId, seq, type, createdAt, payload]) => {
      let body: string | null = null;
      try {
        body = searchableText(type, JSON.parse(payload));
      } catch {
        // an event that no longer parses has no passage to show
      }
      return { conversationId, seq, type, createdAt, snippet: snippetOf(body ?? '', query) };
    });
  }
}
