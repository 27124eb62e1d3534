import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { DataFolder } from '../../main/store/data-folder.js';
import { openDatabase } from '../../main/store/database.js';
import { LATEST_SCHEMA_VERSION } from '../../main/store/migrations/index.js';
import { RunRepository } from '../../main/store/runs.js';
import { hashEvent } from '../../main/store/chain.js';
import { SearchIndex } from '../../main/store/search.js';
import { AnchorRepository } from '../../main/store/anchors.js';
import { parseNamespace } from '../../main/namespaces/namespace.js';
import { seedConversation } from '../support/seed.js';
import { tempDir } from '../support/temp.js';

function sealedDatabase(): string {
  const home = tempDir();
  const { core, store, conversation } = seedConversation(home);
  for (let i = 0; i < 200; i++) store.journal.append(conversation.id, { type: 'note', payload: { i, text: 'x'.repeat(200) } });
  const file = store.file;
  store.db.pragma('wal_checkpoint(TRUNCATE)');
  core.close();
  return file;
}

describe('opening a namespace database', () => {
  it('test_creates_migrates_to_the_latest_schema_and_uses_wal', () => {
    const file = path.join(tempDir(), 'ns', 'ward.db');
    const db = openDatabase(file);
    expect(db.pragma('user_version', { simple: true })).toBe(LATEST_SCHEMA_VERSION);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.close();
  });

  it('test_refuses_a_file_that_is_not_sqlite_names_it_and_leaves_its_bytes_untouched', () => {
    const file = path.join(tempDir(), 'ward.db');
    const garbage = Buffer.from('this is not a database, it is a shopping list\n'.repeat(100));
    fs.writeFileSync(file, garbage);
    expect(() => openDatabase(file)).toThrow(expect.objectContaining({ code: 'store_corrupt', message: expect.stringContaining(file) }));
    expect(fs.readFileSync(file).equals(garbage)).toBe(true);
    expect(fs.existsSync(`${file}-wal`)).toBe(false);
  });

  it('test_refuses_a_truncated_database_names_it_and_leaves_its_bytes_untouched', () => {
    const file = sealedDatabase();
    const whole = fs.readFileSync(file);
    const truncated = whole.subarray(0, Math.floor(whole.length / 2));
    fs.writeFileSync(file, truncated);
    expect(() => openDatabase(file)).toThrow(expect.objectContaining({ code: 'store_corrupt', message: expect.stringMatching(/truncated/) }));
    expect(fs.readFileSync(file).equals(truncated)).toBe(true);
  });

  it('test_refuses_a_database_from_a_newer_schema_and_says_to_upgrade_ward', () => {
    const file = sealedDatabase();
    const raw = new BetterSqlite3(file);
    raw.pragma(`user_version = ${LATEST_SCHEMA_VERSION + 1}`);
    raw.close();
    expect(() => openDatabase(file)).toThrow(expect.objectContaining({ code: 'store_too_new', message: expect.stringMatching(/upgrade Ward/) }));
  });

  it('test_refuses_a_namespace_database_copied_under_another_namespace_folder_n1', () => {
    const home = tempDir();
    const core = new DataFolder(home);
    core.createNamespace('work');
    core.close();
    const work = path.join(home, 'namespaces', parseNamespace('work').hash);
    const personal = path.join(home, 'namespaces', parseNamespace('personal').hash);
    fs.cpSync(work, personal, { recursive: true });
    const again = new DataFolder(home);
    expect(() => again.store(parseNamespace('personal'))).toThrow(expect.objectContaining({ code: 'namespace_conflict' }));
    again.close();
  });
});

describe('agents', () => {
  it('test_publishes_numbered_versions_that_can_never_be_changed_afterwards', () => {
    const { core, store } = seedConversation(tempDir());
    const v2 = store.agents.publish('helper', { instructions: 'be thorough' });
    expect(v2.version).toBe(2);
    expect(store.agents.get('helper', 1).spec).toEqual({ instructions: 'be brief' });
    expect(() => store.db.prepare("UPDATE agent_versions SET spec = '{}' WHERE version = 1").run()).toThrow(/immutable/);
    expect(() => store.db.prepare('DELETE FROM agent_versions').run()).toThrow(/immutable/);
    core.close();
  });

  it('test_keeps_a_conversation_on_its_pinned_version_when_the_agent_gets_a_new_one', () => {
    const { core, store, conversation } = seedConversation(tempDir());
    store.agents.publish('helper', { instructions: 'new' });
    expect(store.conversations.get(conversation.id).agentVersion).toBe(1);
    core.close();
  });
});

describe('migration 4: run owner identity', () => {
  it('test_keeps_runs_written_at_version_3_which_then_match_their_owner_by_pid_alone', () => {
    const file = path.join(tempDir(), 'ward.db');
    const v3 = openDatabase(file, { targetVersion: 3 });
    v3.prepare("INSERT INTO agents (id, name, created_at) VALUES ('a', 'helper', 'now')").run();
    v3.prepare("INSERT INTO agent_versions (agent_id, version, spec, spec_hash, published_at) VALUES ('a', 1, '{}', 'h', 'now')").run();
    v3.prepare("INSERT INTO conversations (id, agent_id, agent_version, cli_session_id, title, created_at, last_hash) VALUES ('c', 'a', 1, 's', 't', 'now', 'g')").run();
    v3.prepare("INSERT INTO runs (id, conversation_id, request_id, fingerprint, state, owner_pid, created_at, updated_at) VALUES ('r', 'c', 'q', 'f', 'running', ?, 'now', 'now')").run(process.ppid);
    v3.close();

    const v4 = openDatabase(file, { targetVersion: 4 });
    expect(v4.pragma('user_version', { simple: true })).toBe(4);
    const runs = new RunRepository(v4);
    expect(runs.get('r')).toMatchObject({ state: 'running', ownerPid: process.ppid, ownerIdentity: null });
    expect(runs.markOrphansUncertain()).toEqual([]);
    v4.close();
  });
});

/** Rows as a schema-4 or -5 Ward wrote them: an agent, a conversation, and events chained by hand. */
function olderRows(db: ReturnType<typeof openDatabase>, events: ReadonlyArray<readonly [string, string]>): void {
  db.prepare("INSERT INTO agents (id, name, created_at) VALUES ('a', 'helper', 'now')").run();
  db.prepare("INSERT INTO agent_versions (agent_id, version, spec, spec_hash, published_at) VALUES ('a', 1, '{}', 'h', 'now')").run();
  let prev = '0'.repeat(64);
  const insert = db.prepare("INSERT INTO events (conversation_id, seq, run_id, type, payload, created_at, prev_hash, hash) VALUES ('c', ?, NULL, ?, ?, 'now', ?, ?)");
  events.forEach(([type, payload], index) => {
    const hash = hashEvent(prev, 'c', index + 1, null, type, payload, 'now');
    insert.run(index + 1, type, payload, prev, hash);
    prev = hash;
  });
  db.prepare("INSERT INTO conversations (id, agent_id, agent_version, cli_session_id, title, created_at, last_seq, last_hash) VALUES ('c', 'a', 1, 's', 't', 'now', ?, ?)").run(events.length, prev);
}

describe('migration 6: journal anchors (J3)', () => {
  it('test_marks_the_head_of_each_journal_of_version_5_as_older_than_anchoring_without_a_mac', () => {
    const file = path.join(tempDir(), 'ward.db');
    const vOld = openDatabase(file, { targetVersion: 5 });
    vOld.pragma('foreign_keys = OFF');
    olderRows(vOld, [
      ['user_prompt', '{"text":"hello"}'],
      ['run_finished', '{"state":"succeeded","reason":null}'],
    ]);
    vOld.close();
    const vNew = openDatabase(file, { targetVersion: 6 });
    expect(vNew.pragma('user_version', { simple: true })).toBe(6);
    const head = vNew.prepare("SELECT last_hash FROM conversations WHERE id = 'c'").get() as { last_hash: string };
    expect(vNew.prepare('SELECT conversation_id, seq, hash, mac FROM anchors').all()).toEqual([{ conversation_id: 'c', seq: 2, hash: head.last_hash, mac: '' }]);
    // The run that ended before anchoring existed is not reported unanchored, even with a key to check with.
    expect(new AnchorRepository(vNew).check('c', Buffer.alloc(32, 1))).toEqual({ anchors: 1, anchoredSeq: 2, predates: 2, keyChecked: true, needsKey: false, problem: null });
    vNew.close();
  });
});

describe('migration 7: the search index (E4)', () => {
  it('test_indexes_the_prompts_answers_and_tools_journaled_at_version_6_skipping_what_does_not_parse', () => {
    const file = path.join(tempDir(), 'ward.db');
    const vOld = openDatabase(file, { targetVersion: 6 });
    vOld.pragma('foreign_keys = OFF');
    olderRows(vOld, [
      ['user_prompt', '{"text":"plan a trip to Lisbon"}'],
      ['assistant_delta', '{"text":"Lisbon in a delta","messageIndex":0}'],
      ['assistant_text', '{"text":"Lisbon in spring is lovely"}'],
      ['tool_result', '{"toolUseId":"t","tool":"weather_lookup","ok":true,"bytes":3,"durationMs":1,"errorCode":null,"preview":"Lisbon: 24 C","previewTruncated":false}'],
      ['assistant_text', 'not json at all'],
    ]);
    vOld.close();
    const vNew = openDatabase(file, { targetVersion: 7 });
    expect(vNew.pragma('user_version', { simple: true })).toBe(7);
    expect(new SearchIndex(vNew).query('lisbon').map((hit) => [hit.seq, hit.type]).sort()).toEqual([
      [1, 'user_prompt'],
      [3, 'assistant_text'],
      [4, 'tool_result'],
    ]);
    vNew.close();
  });
});

describe('migration 9: text written without spaces, indexed as pairs of characters (E4)', () => {
  it('test_an_index_of_version_8_finds_words_inside_japanese_text_after_the_migration_and_keeps_every_other_hit', () => {
    const file = path.join(tempDir(), 'ward.db');
    const vOld = openDatabase(file, { targetVersion: 6 });
    vOld.pragma('foreign_keys = OFF');
    olderRows(vOld, [
      ['user_prompt', '{"text":"日本語のテキストを検索"}'],
      ['assistant_text', '{"text":"Lisbon in spring"}'],
      ['assistant_text', '{"text":"Lisbon and 東京"}'],
    ]);
    vOld.close();
    const v8 = openDatabase(file, { targetVersion: 8 });
    // As version 8 indexed it: the whole run is one word, so a word inside it is not found.
    expect(new SearchIndex(v8).query('検索')).toEqual([]);
    v8.close();
    const vNew = openDatabase(file, { targetVersion: 9 });
    const search = new SearchIndex(vNew);
    expect(search.query('検索').map((hit) => hit.seq)).toEqual([1]);
    expect(search.query('東京').map((hit) => hit.seq)).toEqual([3]);
    expect(search.query('lisbon').map((hit) => hit.seq).sort()).toEqual([2, 3]);
    // The rows written again replaced the old ones: the whole run is no longer a word of the index.
    expect(vNew.prepare('SELECT count(*) AS n FROM events_fts WHERE events_fts MATCH ?').get('"日本語のテキストを検索"')).toEqual({ n: 0 });
    expect(vNew.prepare("INSERT INTO events_fts (events_fts) VALUES ('integrity-check')").run().changes).toBeGreaterThanOrEqual(0);
    vNew.close();
  });
});
