import { describe, expect, it } from 'vitest';
import { DataFolder } from '../../main/store/data-folder.js';
import { parseNamespace } from '../../main/namespaces/namespace.js';
import { RunRepository, fingerprintInput, processIdentity } from '../../main/store/runs.js';
import { seedConversation } from '../support/seed.js';
import { tempDir } from '../support/temp.js';

describe('run admission (R7)', () => {
  it('test_admits_one_producer_per_conversation_and_refuses_a_second', () => {
    const { core, store, conversation } = seedConversation(tempDir());
    const first = store.runs.admit(conversation.id, 'req-1', fingerprintInput({ prompt: 'hi' }));
    expect(first).toMatchObject({ attached: false, run: { state: 'admitted' } });
    expect(() => store.runs.admit(conversation.id, 'req-2', fingerprintInput({ prompt: 'hello' }))).toThrow(
      expect.objectContaining({ code: 'conversation_busy' }),
    );
    core.close();
  });

  it('test_attaches_the_same_request_id_with_the_same_input_to_the_existing_run', () => {
    const { core, store, conversation } = seedConversation(tempDir());
    const first = store.runs.admit(conversation.id, 'req-1', fingerprintInput({ prompt: 'hi', tools: ['a'] }));
    const again = store.runs.admit(conversation.id, 'req-1', fingerprintInput({ tools: ['a'], prompt: 'hi' }));
    expect(again).toEqual({ attached: true, run: first.run });
    core.close();
  });

  it('test_refuses_the_same_request_id_with_a_different_input_even_after_the_run_ended', () => {
    const { core, store, conversation } = seedConversation(tempDir());
    const { run } = store.runs.admit(conversation.id, 'req-1', fingerprintInput({ prompt: 'hi' }));
    store.runs.transition(run.id, 'running');
    store.runs.transition(run.id, 'succeeded');
    expect(() => store.runs.admit(conversation.id, 'req-1', fingerprintInput({ prompt: 'different' }))).toThrow(
      expect.objectContaining({ code: 'request_conflict' }),
    );
    core.close();
  });

  it('test_releases_the_conversation_once_the_run_reaches_a_final_state', () => {
    const { core, store, conversation } = seedConversation(tempDir());
    const { run } = store.runs.admit(conversation.id, 'req-1', 'f1');
    store.runs.transition(run.id, 'running');
    store.runs.transition(run.id, 'stopping');
    store.runs.transition(run.id, 'stopped', 'stopped by the user');
    expect(store.runs.admit(conversation.id, 'req-2', 'f2').attached).toBe(false);
    core.close();
  });

  it('test_refuses_illegal_state_moves', () => {
    const { core, store, conversation } = seedConversation(tempDir());
    const { run } = store.runs.admit(conversation.id, 'req-1', 'f1');
    store.runs.transition(run.id, 'running');
    store.runs.transition(run.id, 'succeeded');
    expect(() => store.runs.transition(run.id, 'running')).toThrow(/cannot go from succeeded to running/);
    core.close();
  });
});

describe('uncertain runs (R8)', () => {
  it('test_marks_runs_of_a_dead_process_uncertain_at_start_up_and_keeps_their_reservation_until_reconciled', () => {
    const home = tempDir();
    const { core, store, conversation } = seedConversation(home);
    const deadOwner = new RunRepository(store.db, 999_999);
    const { run } = deadOwner.admit(conversation.id, 'req-1', 'f1');
    deadOwner.transition(run.id, 'running');
    core.close();

    const restarted = new DataFolder(home);
    const reopened = restarted.store(parseNamespace('default'));
    expect(restarted.recovered.map((r) => r.id)).toEqual([run.id]);
    expect(reopened.runs.get(run.id)).toMatchObject({ state: 'uncertain', reason: expect.stringContaining('outcome is unknown') });
    expect(() => reopened.runs.admit(conversation.id, 'req-2', 'f2')).toThrow(/has an uncertain run .*ward --namespace \w+ reconcile/);
    expect(() => reopened.runs.transition(run.id, 'failed')).toThrow(/cannot go from uncertain/);

    reopened.runs.reconcile(run.id, 'failed', 'checked upstream: nothing was written');
    expect(reopened.runs.admit(conversation.id, 'req-2', 'f2').attached).toBe(false);
    restarted.close();
  });

  it('test_leaves_runs_of_a_live_process_alone', () => {
    const { core, store, conversation } = seedConversation(tempDir());
    const liveOwner = new RunRepository(store.db, process.ppid);
    const { run } = liveOwner.admit(conversation.id, 'req-1', 'f1');
    expect(store.runs.markOrphansUncertain()).toEqual([]);
    expect(store.runs.get(run.id).state).toBe('admitted');
    core.close();
  });

  it('test_marks_a_run_uncertain_when_its_owner_pid_now_belongs_to_another_process_pid_reused_e_g_after_a_reboot', () => {
    const { core, store, conversation } = seedConversation(tempDir());
    expect(processIdentity(process.pid)).toMatch(/^\d+$/);
    // A live pid, but not the process that admitted the run: its recorded start time differs.
    const formerOwner = new RunRepository(store.db, process.ppid, 'started-long-ago');
    const { run } = formerOwner.admit(conversation.id, 'req-1', 'f1');
    expect(store.runs.markOrphansUncertain().map((r) => r.id)).toEqual([run.id]);
    expect(store.runs.get(run.id)).toMatchObject({ state: 'uncertain', ownerIdentity: 'started-long-ago' });
    core.close();
  });
});
