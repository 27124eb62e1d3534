/**
 * Search across a namespace's conversations (E4): an SQLite FTS5 index of what people look for —
 * prompts, answers, tool names and tool previews — one row per event, written in the append's
 * transaction (journal.ts) and filled for older journals by migration 6. Queries are bound
 * parameters; an FTS5 syntax error is a usage error that says how to write one.
 */
import type { Database, Statement } from 'better-sqlite3';
import { WardError } from '../base/errors.js';

/** Marks around a match in a snippet; control characters, stripped from indexed text. */
const MATCH_START = '\u0002';
const MATCH_END = '\u0003';
const MARKERS = /[\u0002\u0003]/g;
/** Tokens around a match in a snippet. */
const SNIPPET_TOKENS = 16;
export const MAX_SEARCH_QUERY_CHARS = 200;
export const MAX_SEARCH_RESULTS = 100;
const MAX_SEARCH_OFFSET = 10_000;

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
  const body = found.replace(MARKERS, ' ').trim();
  return body === '' ? null : body;
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

type HitRow = [string, number, string, string, string];

function splitSnippet(marked: string): SnippetPart[] {
  const parts: SnippetPart[] = [];
  for (const [index, piece] of marked.split(MATCH_START).entries()) {
    const end = piece.indexOf(MATCH_END);
    if (index === 0 || end === -1) {
      if (piece !== '') parts.push({ text: piece, match: false });
      continue;
    }
    parts.push({ text: piece.slice(0, end), match: true });
    if (end + 1 < piece.length) parts.push({ text: piece.slice(end + 1), match: false });
  }
  return parts;
}

const FTS_SYNTAX = /^(fts5: |no such column|unknown special query|unterminated string)/;

export class SearchIndex {
  private readonly select: Statement<[string, number, number], HitRow>;

  constructor(db: Database) {
    // Ranked and cut inside FTS5 first, so only a page of rows is joined and given a snippet.
    this.select = db
      .prepare<[string, number, number], HitRow>(
        `SELECT hit.conversation_id, hit.seq, e.type, e.created_at, hit.snippet FROM (
           SELECT conversation_id, seq, snippet(events_fts, 0, '${MATCH_START}', '${MATCH_END}', '…', ${SNIPPET_TOKENS}) AS snippet, rank
           FROM events_fts WHERE events_fts MATCH ? ORDER BY rank LIMIT ? OFFSET ?
         ) AS hit JOIN events AS e ON e.conversation_id = hit.conversation_id AND e.seq = hit.seq
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
    let rows: HitRow[];
    try {
      rows = this.select.all(query, limit, offset);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (!FTS_SYNTAX.test(message)) throw error;
      throw new WardError(
        'usage',
        `the search query ${JSON.stringify(query.slice(0, 60))} is not valid (${message.slice(0, 120)}): words match as given; quote a phrase ("like this"), combine with AND, OR, NOT, or end a word with * for a prefix`,
        { cause: error },
      );
    }
    return rows.map(([conversationId, seq, type, createdAt, snippet]) => ({ conversationId, seq, type, createdAt, snippet: splitSnippet(snippet) }));
  }
}
