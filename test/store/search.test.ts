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

  it('test_whatever_a_person_types_is_searched_as_the_words_it_holds_operators_only_where_they_stand_between_terms', () => {
    const { core, store, conversation } = seedConversation(tempDir());
    store.journal.append(conversation.id, journalEvent('user_prompt', { text: 'Call os.path.join on config.timeout_ms for the api-server in deploy/api-server.' }));
    store.journal.append(conversation.id, journalEvent('assistant_text', { text: 'parse_config_file() is used when seq > 10, and NOT before.' }));
    store.journal.append(conversation.id, journalEvent('assistant_text', { text: 'The server of the api is down.' }));
    const seqs = (query: string) => store.search.query(query).map((hit) => hit.seq).sort();
    // Each of these was refused as FTS5 syntax (exit 2) or read a word as a column name.
    expect(seqs('os.path.join')).toEqual([1]);
    expect(seqs('config.timeout_ms')).toEqual([1]);
    // Words joined by punctuation are a phrase: "server of the api" does not match api-server.
    expect(seqs('api-server')).toEqual([1]);
    expect(seqs('deploy/api-server')).toEqual([1]);
    expect(seqs('parse_config_file()')).toEqual([2]);
    expect(seqs('seq > 10')).toEqual([2]);
    expect(seqs('foo-')).toEqual([]);
    expect(seqs('"unclosed')).toEqual([]);
    expect(seqs('nosuchcolumn: x')).toEqual([]);
    // An operator between two terms combines them; anywhere else it is a word.
    expect(seqs('server OR parse')).toEqual([1, 2, 3]);
    expect(seqs('server NOT api')).toEqual([]);
    expect(seqs('api NOT deploy')).toEqual([3]);
    expect(seqs('NOT')).toEqual([2]);
    expect(seqs('and NOT')).toEqual([2]);
    expect(seqs('"is down" AND server')).toEqual([3]);
    expect(seqs('serv*')).toEqual([1, 3]);
    expect(seqs('"api serv"*')).toEqual([1]);
    // Nothing to look for is a usage error that says why; sizes are bounded.
    let caught: unknown;
    try {
      store.search.query('> -- ***');
    } catch (error) {
      caught = error;
    }
    expect(isWardError(caught, 'usage')).toBe(true);
    expect((caught as Error).message).toBe('the search query "> -- ***" has no word to look for: a word is letters or digits');
    expect(() => store.search.query('x'.repeat(201))).toThrow('the search query is longer than 200 characters');
    expect(() => store.search.query('ok', { limit: 101 })).toThrow('a search returns 1 to 100 results at a time');
    // A query is a bound parameter, never SQL.
    expect(store.search.query('"\'); DROP TABLE events; --"')).toEqual([]);
    expect(store.db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'events'").get()).toBeDefined();
    core.close();
  });

  it('test_finds_a_word_inside_chinese_and_japanese_text_written_without_spaces_and_marks_it_in_the_passage', () => {
    const { core, store, conversation } = seedConversation(tempDir());
    store.journal.append(conversation.id, journalEvent('user_prompt', { text: '日本語のテキストを検索してください' }));
    store.journal.append(conversation.id, journalEvent('assistant_text', { text: '我们在北京搜索数据库, then deploy.' }));
    const seqs = (query: string) => store.search.query(query).map((hit) => hit.seq).sort();
    expect(seqs('日本語')).toEqual([1]);
    expect(seqs('テキスト')).toEqual([1]);
    expect(seqs('検索')).toEqual([1]);
    expect(seqs('北京')).toEqual([2]);
    expect(seqs('数据库 deploy')).toEqual([2]);
    expect(seqs('東京')).toEqual([]);
    // The pairs must stand together: 語 and テ are in the text, not next to each other as 語テ.
    expect(seqs('語テ')).toEqual([]);
    const marked = store.search.query('テキスト')[0]!.snippet.map((part) => (part.match ? `[${part.text}]` : part.text)).join('');
    expect(marked).toBe('日本語の[テキスト]を検索してください');
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
