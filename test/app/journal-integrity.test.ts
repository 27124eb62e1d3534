/** J3: each run's end anchors the chain head with the namespace's keychain key; a rewritten and recomputed chain fails `ward verify`. */
import { describe, expect, it } from 'vitest';
import { journalEvent } from '../../common/events.js';
import { hashEvent } from '../../main/store/chain.js';
import type { NamespaceStore } from '../../main/store/namespace-store.js';
import { RUN_STARTED } from '../support/events.js';
import { seedConversation } from '../support/seed.js';
import { tempDir } from '../support/temp.js';
import { ward } from '../support/ward-cli.js';
import { closeHarnessesAfterEach, startHarness, type Harness } from './runs/harness.js';

let harness: Harness | undefined;
closeHarnessesAfterEach();

/** What someone with write access to ward.db (and not to the keychain) can do: change an event and recompute every hash after it. */
function rewriteAndRechain(store: NamespaceStore, conversationId: string, seq: number, payload: string): void {
  const rows = store.db.prepare<[string], { seq: number; run_id: string | null; type: string; payload: string; created_at: string }>('SELECT seq, run_id, type, payload, created_at FROM events WHERE conversation_id = ? ORDER BY seq').all(conversationId);
  let prev = '0'.repeat(64);
  const update = store.db.prepare('UPDATE events SET payload = ?, prev_hash = ?, hash = ? WHERE conversation_id = ? AND seq = ?');
  for (const row of rows) {
    const text = row.seq === seq ? payload : row.payload;
    const hash = hashEvent(prev, conversationId, row.seq, row.run_id, row.type, text, row.created_at);
    update.run(text, prev, hash, conversationId, row.seq);
    prev = hash;
  }
  store.db.prepare('UPDATE conversations SET last_hash = ? WHERE id = ?').run(prev, conversationId);
}

async function oneTurn(): Promise<{ store: NamespaceStore; conversationId: string; last: number }> {
  harness = await startHarness([{ blocks: [{ type: 'text', text: 'The answer is 42.' }] }]);
  const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'What is the answer?' });
  expect(await handle.done).toMatchObject({ state: 'succeeded' });
  const store = harness.core.store(harness.ns);
  return { store, conversationId: handle.conversationId, last: store.journal.lastSeq(handle.conversationId) };
}

describe('anchors (J3)', () => {
  it('test_a_finished_run_anchors_the_head_and_verify_checks_it_with_the_keychain_key', async () => {
    const { store, conversationId, last } = await oneTurn();
    expect(store.anchors.list(conversationId)).toEqual([{ seq: last, hash: store.journal.head(conversationId).hash, mac: expect.stringMatching(/^[0-9a-f]{64}$/) }]);
    expect(await harness!.app.integrity.verify(store, conversationId)).toMatchObject({ ok: true, count: last, anchors: { anchors: 1, anchoredSeq: last, keyChecked: true, problem: null } });
    const env = { WARD_HOME: harness!.home, DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS };
    expect(await ward(['verify', conversationId], { env })).toMatchObject({ code: 0, stdout: `ok: ${last} events, hash chain intact; 1 anchor up to event ${last} hold, their keys checked\n` });
  });

  it('test_a_rewritten_and_recomputed_chain_passes_j2_and_fails_on_its_anchor', async () => {
    const { store, conversationId, last } = await oneTurn();
    rewriteAndRechain(store, conversationId, 2, JSON.stringify({ text: 'What is the forged question?' }));
    expect(store.journal.verify(conversationId)).toEqual({ ok: true, count: last });
    const reason = `an event in #1–#${last} was altered and the chain recomputed: event ${last} no longer matches its anchor`;
    expect(await harness!.app.integrity.verify(store, conversationId)).toMatchObject({ ok: false, firstBadSeq: 1, reason });
    const result = await ward(['verify', conversationId], { env: { WARD_HOME: harness!.home, DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS } });
    expect(result).toMatchObject({ code: 3, stdout: `TAMPERED: first bad event is #1: ${reason}\n` });
  });

  it('test_forged_anchor_hashes_fail_on_the_mac_and_without_a_keychain_verify_says_the_keys_went_unchecked', async () => {
    const { store, conversationId, last } = await oneTurn();
    rewriteAndRechain(store, conversationId, 2, JSON.stringify({ text: 'forged' }));
    store.db.prepare('UPDATE anchors SET hash = ? WHERE conversation_id = ?').run(store.journal.head(conversationId).hash, conversationId);
    expect(await harness!.app.integrity.verify(store, conversationId)).toMatchObject({ ok: false, reason: `the anchor of event ${last} was not made with this namespace's anchor key (forged, or copied from another data folder)` });
    // No Secret Service: the chain and the anchors' hashes are checked, the MACs cannot be, so the journal is not vouched for.
    const offline = await ward(['verify', conversationId], { env: { WARD_HOME: harness!.home } });
    expect(offline.code).toBe(7);
    expect(offline.stdout).toMatch(new RegExp(`^NOT VERIFIED: ${last} events, hash chain intact, but its anchors could not be checked: the keychain could not be read`));
  });

  it('test_removed_anchors_and_a_cut_tail_are_named', async () => {
    const { store, conversationId, last } = await oneTurn();
    store.db.prepare('DELETE FROM events WHERE conversation_id = ? AND seq = ?').run(conversationId, last);
    const head = store.db.prepare<[string, number], { hash: string }>('SELECT hash FROM events WHERE conversation_id = ? AND seq = ?').get(conversationId, last - 1)!;
    store.db.prepare('UPDATE conversations SET last_seq = ?, last_hash = ? WHERE id = ?').run(last - 1, head.hash, conversationId);
    expect(await harness!.app.integrity.verify(store, conversationId)).toMatchObject({ ok: false, firstBadSeq: last, reason: `event ${last} is missing: it was anchored when its run ended (the journal was cut short)` });

    await harness!.close();
    const second = await oneTurn();
    second.store.db.prepare('DELETE FROM anchors').run();
    expect(await harness!.app.integrity.verify(second.store, second.conversationId)).toMatchObject({
      ok: false,
      reason: `the run that ended at event ${second.last} is not anchored (no anchor at all): anchors were removed, or the keychain was unavailable when it ended`,
    });
  });

  it('test_a_finished_runs_end_says_in_the_chain_that_it_is_anchored', async () => {
    const { store, conversationId } = await oneTurn();
    expect(store.journal.latest(conversationId, ['run_finished'])?.payload).toEqual({ state: 'succeeded', reason: null, anchored: true });
  });

  it('test_a_full_rewrite_that_deletes_the_anchors_fails_with_the_keychain_and_is_not_verified_without_it', async () => {
    const { store, conversationId, last } = await oneTurn();
    rewriteAndRechain(store, conversationId, 2, JSON.stringify({ text: 'What is the forged question?' }));
    store.db.prepare('DELETE FROM anchors WHERE conversation_id = ?').run(conversationId);
    expect(store.journal.verify(conversationId)).toEqual({ ok: true, count: last });
    const withKeychain = await ward(['verify', conversationId], { env: { WARD_HOME: harness!.home, DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS } });
    expect(withKeychain).toMatchObject({ code: 3, stdout: `TAMPERED: first bad event is #1: the run that ended at event ${last} is not anchored (no anchor at all): anchors were removed, or the keychain was unavailable when it ended\n` });
    // Without the keychain the run_finished that says "anchored" is what remains: verify cannot pass it.
    const offline = await ward(['verify', conversationId], { env: { WARD_HOME: harness!.home } });
    expect(offline.code).toBe(7);
    expect(offline.stdout).toMatch(new RegExp(`^NOT VERIFIED: ${last} events, hash chain intact, but its anchors could not be checked: the keychain could not be read .*; run "ward verify" where this namespace's keychain can be read\n$`));
  });

  it('test_a_run_that_ended_without_the_anchor_key_verifies_without_a_keychain_as_not_anchored_yet', async () => {
    const home = tempDir('ward-unanchored-');
    const { core, store, conversation } = seedConversation(home);
    store.journal.appendMany(conversation.id, [journalEvent('run_started', RUN_STARTED), journalEvent('user_prompt', { text: 'hi' }), journalEvent('run_finished', { state: 'succeeded', reason: null, anchored: false })]);
    core.close();
    expect(await ward(['verify', conversation.id], { env: { WARD_HOME: home } })).toMatchObject({ code: 0, stdout: 'ok: 3 events, hash chain intact; not anchored yet\n' });
  });
});
