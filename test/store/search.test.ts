/** E4: the full-text index is written with the journal, in the same transaction, and queried with bound parameters. */
import { describe, expect, it } from 'vitest';
import { journalEvent } from '../../common/events.js';
import { isWardError } from '../../main/base/errors.js';
import { snippetOf } from '../../main/store/search.js';
import { appendTurn } from '../export/support.js';
import { seedConversation } from '../support/seed.js';
import { tempDir } from '../support/temp.js';

/** Index rows holding a word, counted in the index itself (it keeps no text to scan). */
const indexed = (store: ReturnType<typeof seedConversation>['store'], word: string) => store.db.prepare('SELECT count(*) AS n FROM events_fts WHERE events_fts MATCH ?').get(word) as { n: number };

describe('search (E4)', () => {
  it('test_finds_prompts_answers_tool_names_and_previews_best_first_with_the_matched_words_marked', () => {
    const { core, store, conversation } = seedConversation(tempDir());
    appendTurn(store, conversation.id, 'run-1', 'Lisbon is sunny and Lisbon is warm.');
    const other = store.conversations.create({ agentId: conversation.agentId, agentVersion: 1, title: 'other chat' });
    store.journal.append(other.id, journalEvent('assistant_text', { text: 'Porto is rainy.' }));
    const hits = store.search.query('lisbon');
    expect(hits.map((hit) => [hit.seq, hit.type])).toEqual([
      [5, 'assistant_text'],
      [2, 'user_prompt'],
    ]);
    expect(hits[0]!.snippet).toEqual([
      { text: 'Lisbon', match: true },
      { text: ' is sunny and ', match: false },
      { text: 'Lisbon', match: true },
      { text: ' is warm.', match: false },
    ]);
    expect(store.search.query('weather_lookup').map((hit) => hit.type)).toEqual(expect.arrayContaining(['tool_call', 'tool_result']));
    expect(store.search.query('sunny').map((hit) => hit.type)).toEqual(expect.arrayContaining(['tool_result', 'assistant_text']));
    expect(store.search.query('porto')).toEqual([expect.objectContaining({ conversationId: other.id, seq: 1 })]);
    expect(store.search.query('"is sunny" AND warm').map((hit) => hit.seq)).toEqual([5]);
    core.close();
  });

  it('test_indexes_in_the_append_transaction_a_failed_append_leaves_neither_event_nor_index_row', () => {
    const { core, store, conversation } = seedConversation(tempDir());
    store.journal.append(conversation.id, journalEvent('user_prompt', { text: 'first words' }));
    expect(indexed(store, 'words')).toEqual({ n: 1 });
    expect(() =>
      store.journal.appendMany(conversation.id, [journalEvent('user_prompt', { text: 'second words' }), journalEvent('assistant_text', { text: 'x'.repeat(1024 * 1024 + 1) })]),
    ).toThrow(/exceeds/);
    expect(indexed(store, 'words')).toEqual({ n: 1 });
    expect(store.journal.lastSeq(conversation.id)).toBe(1);
    expect(store.search.query('second')).toEqual([]);
    // Streamed deltas repeat their final text: not indexed.
    store.journal.append(conversation.id, journalEvent('assistant_delta', { text: 'streamed words', messageIndex: 0 }));
    expect(store.search.query('streamed')).toEqual([]);
    core.close();
  });

  it('test_a_query_fts5_cannot_parse_is_a_usage_error_that_says_how_to_write_one_and_sizes_are_bounded', () => {
    const { core, store } = seedConversation(tempDir());
    for (const query of ['foo-', '"unclosed', 'nosuchcolumn: x', 'AND']) {
      let caught: unknown;
      try {
        store.search.query(query);
      } catch (error) {
        caught = error;
      }
      expect(isWardError(caught, 'usage'), query).toBe(true);
      expect((caught as Error).message).toMatch(/^the search query ".*" is not valid \(.+\): words match as given; quote a phrase/);
    }
    expect(() => store.search.query('x'.repeat(201))).toThrow('the search query is longer than 200 characters');
    expect(() => store.search.query('ok', { limit: 101 })).toThrow('a search returns 1 to 100 results at a time');
    // A query is a bound parameter, never SQL.
    expect(store.search.query('"\'); DROP TABLE events; --"')).toEqual([]);
    expect(store.db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'events'").get()).toBeDefined();
    core.close();
  });
});

describe('snippets', () => {
  it('test_marks_words_prefixes_and_words_with_diacritics_as_fts5_matched_them_and_cuts_long_text_around_the_first_match', () => {
    const marked = (body: string, query: string) => snippetOf(body, query).map((part) => (part.match ? `[${part.text}]` : part.text)).join('');
    expect(marked('Deploying the café in Lisbon', 'deploy* AND cafe')).toBe('[Deploying] the [café] in Lisbon');
    expect(marked('weather_lookup\nsunny', '"weather lookup"')).toBe('[weather]_[lookup]\nsunny');
    const long = `${'filler '.repeat(50)}the needle is here ${'more '.repeat(50)}`;
    expect(marked(long, 'needle')).toBe('…filler filler filler filler filler the [needle] is here more more more more more more more more more…');
    expect(marked('nothing matches here', 'NEAR(a b)')).toBe('nothing matches here');
  });
});
