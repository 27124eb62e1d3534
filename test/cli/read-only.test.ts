/** Review reads only: `ward replay`, `verify`, `search` and `usage` open the database read-only, migrate nothing, mark nothing uncertain, and need no Secret Service. */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { parseNamespace } from '../../main/namespaces/namespace.js';
import { NamespaceStore } from '../../main/store/namespace-store.js';
import { tempDir } from '../support/temp.js';
import { ward } from '../support/ward-cli.js';

/** A namespace written by an older Ward (schema 4), with a run whose owner is gone. */
function olderNamespace() {
  const home = tempDir();
  fs.chmodSync(home, 0o700);
  const ns = parseNamespace('default');
  fs.mkdirSync(path.join(home, 'namespaces', ns.hash), { recursive: true, mode: 0o700 });
  const store = NamespaceStore.open(home, ns, { targetVersion: 4 });
  const agent = store.agents.publish('helper', { instructions: 'be brief' });
  const conversation = store.conversations.create({ agentId: agent.agentId, agentVersion: agent.version, title: 'older chat' });
  for (let i = 1; i <= 3; i++) store.journal.append(conversation.id, { type: 'note', payload: { text: `line ${i}` } });
  const gone = spawnSync(process.execPath, ['-e', '0']).pid!;
  store.db
    .prepare("INSERT INTO runs (id, conversation_id, request_id, fingerprint, state, owner_pid, created_at, updated_at) VALUES ('run-1', ?, 'req', 'fp', 'running', ?, 'now', 'now')")
    .run(conversation.id, gone);
  store.db.pragma('wal_checkpoint(TRUNCATE)');
  store.close();
  const file = store.file;
  const digest = () => createHash('sha256').update(fs.readFileSync(file)).digest('hex');
  return { home, file, conversation, before: digest(), digest };
}

describe('reading a namespace changes nothing in it', () => {
  it('test_replay_verify_search_and_usage_leave_an_older_database_byte_for_byte_as_it_was_without_a_secret_service', async () => {
    const { home, file, conversation, before, digest } = olderNamespace();
    // No D-Bus, so no Secret Service: reading must not need one.
    const env = { WARD_HOME: home };
    const replay = await ward(['replay', conversation.id], { env });
    expect(replay).toMatchObject({ code: 0, stderr: '' });
    expect(replay.stdout.trim().split('\n')).toHaveLength(3);
    expect(await ward(['verify', conversation.id], { env })).toMatchObject({ code: 0, stdout: 'ok: 3 events, hash chain intact\n' });
    expect(await ward(['usage'], { env })).toMatchObject({ code: 0 });
    const search = await ward(['search', 'line'], { env });
    expect(search.code).toBe(4);
    expect(search.stderr).toContain('has no search index yet');

    expect(digest()).toBe(before);
    const db = new BetterSqlite3(file, { readonly: true });
    expect(db.pragma('user_version', { simple: true })).toBe(4);
    // R8 is start-up recovery for a Ward that writes; a reader leaves the orphaned run for it.
    expect(db.prepare("SELECT state FROM runs WHERE id = 'run-1'").get()).toEqual({ state: 'running' });
    db.close();
  });

  it('test_a_namespace_that_does_not_exist_is_not_created_by_reading_it', async () => {
    const home = tempDir();
    const result = await ward(['replay', '00000000-0000-4000-8000-000000000000'], { env: { WARD_HOME: home } });
    expect(result.code).toBe(5);
    expect(result.stderr).toBe(`ward replay: no namespace default in ${home}\n`);
    expect(fs.readdirSync(home)).toEqual([]);
  });
});
