import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { GrantStore } from '../../main/permissions/grant-store.js';
import { openDatabase } from '../../main/store/database.js';
import { seedConversation } from '../support/seed.js';
import { tempDir } from '../support/temp.js';

describe('grant store', () => {
  it('test_migration_1_to_2_keeps_existing_rows_and_adds_grants', () => {
    const file = path.join(tempDir(), 'ward.db');
    const v1 = openDatabase(file, { targetVersion: 1 });
    v1.prepare("INSERT INTO agents (id, name, created_at) VALUES ('a1', 'helper', 'now')").run();
    v1.prepare("INSERT INTO agent_versions (agent_id, version, spec, spec_hash, published_at) VALUES ('a1', 1, '{}', 'h', 'now')").run();
    v1.prepare("INSERT INTO conversations (id, agent_id, agent_version, cli_session_id, title, created_at, last_hash) VALUES ('c1', 'a1', 1, 's1', 'chat', 'now', ?)").run('0'.repeat(64));
    expect(v1.pragma('user_version', { simple: true })).toBe(1);
    expect(v1.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'grants'").get()).toEqual({ n: 0 });
    v1.close();

    const v2 = openDatabase(file, { targetVersion: 2 });
    expect(v2.pragma('user_version', { simple: true })).toBe(2);
    expect(v2.prepare('SELECT id, title FROM conversations').all()).toEqual([{ id: 'c1', title: 'chat' }]);
    const grants = new GrantStore(v2);
    const grant = grants.add({ scope: 'conversation', conversationId: 'c1', effect: 'allow', kind: 'run', value: 'git', grantedBy: 'test' });
    expect(grants.activeRules('c1', 'a1')).toEqual([{ effect: 'allow', kind: 'run', value: 'git', source: 'conversation', grantId: grant.id }]);
    v2.close();
  });

  it('test_schema_refuses_a_conversation_grant_without_a_conversation', () => {
    const { store } = seedConversation(tempDir());
    expect(() =>
      store.db.prepare("INSERT INTO grants (id, scope, effect, kind, value, granted_by, created_at) VALUES ('g', 'conversation', 'allow', 'run', 'git', 'x', 'now')").run(),
    ).toThrow(/CHECK constraint failed/);
    store.close();
  });

  it('test_conversation_grants_apply_only_to_their_conversation_agent_grants_to_all_of_the_agent', () => {
    const { store, conversation } = seedConversation(tempDir());
    const other = store.conversations.create({ agentId: conversation.agentId, agentVersion: conversation.agentVersion, title: 'second' });
    const grants = new GrantStore(store.db);
    grants.add({ scope: 'conversation', conversationId: conversation.id, effect: 'allow', kind: 'env', value: 'HOME', grantedBy: 'prompt:conversation' });
    grants.add({ scope: 'agent', agentId: conversation.agentId, effect: 'allow', kind: 'run', value: 'git', grantedBy: 'prompt:always' });
    expect(grants.activeRules(conversation.id, conversation.agentId).map((rule) => rule.value)).toEqual(['HOME', 'git']);
    expect(grants.activeRules(other.id, conversation.agentId).map((rule) => rule.value)).toEqual(['git']);
    store.close();
  });

  it('test_adding_the_same_grant_twice_returns_the_existing_one', () => {
    const { store, conversation } = seedConversation(tempDir());
    const grants = new GrantStore(store.db);
    const a = grants.add({ scope: 'conversation', conversationId: conversation.id, effect: 'allow', kind: 'env', value: 'HOME', grantedBy: 'x' });
    const b = grants.add({ scope: 'conversation', conversationId: conversation.id, effect: 'allow', kind: 'env', value: 'HOME', grantedBy: 'x' });
    expect(b.id).toBe(a.id);
    store.close();
  });

  it('test_non_canonical_values_are_refused', () => {
    const { store, conversation } = seedConversation(tempDir());
    const grants = new GrantStore(store.db);
    expect(() => grants.add({ scope: 'conversation', conversationId: conversation.id, effect: 'allow', kind: 'net', value: 'API.github.com', grantedBy: 'x' })).toThrow(/is not canonical/);
    expect(() => grants.add({ scope: 'conversation', conversationId: conversation.id, effect: 'allow', kind: 'net', value: 'https://x', grantedBy: 'x' })).toThrow(/not a URL/);
    store.close();
  });

  it('test_revoke_is_seen_by_another_connection_immediately', () => {
    const { store, conversation } = seedConversation(tempDir());
    const grants = new GrantStore(store.db);
    const grant = grants.add({ scope: 'conversation', conversationId: conversation.id, effect: 'allow', kind: 'mcp', value: 'github/list_issues', grantedBy: 'x' });
    const other = new BetterSqlite3(store.file);
    new GrantStore(other).revoke(grant.id.slice(0, 8));
    other.close();
    expect(grants.activeRules(conversation.id, conversation.agentId)).toEqual([]);
    expect(grants.list({ conversationId: conversation.id, includeRevoked: true })[0]!.revokedAt).not.toBeNull();
    store.close();
  });

  it('test_revoking_an_unknown_grant_names_it', () => {
    const { store } = seedConversation(tempDir());
    expect(() => new GrantStore(store.db).revoke('deadbeef')).toThrow('no grant deadbeef');
    expect(() => new GrantStore(store.db).revoke('x')).toThrow('no grant "x"');
    store.close();
  });
});
