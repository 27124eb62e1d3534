import { describe, expect, it } from 'vitest';
import { DataFolder } from '../../main/store/data-folder.js';
import { parseNamespace } from '../../main/namespaces/namespace.js';
import { RunRepository, fingerprintInput, processIdentity } from '../../main/store/runs.js';
import { seedConversation } from '../support/seed.js';
import { tempDir } from '../support/temp.js';

describe('run admission (R7)', () => {
  it('admits one producer per conversation and refuses a second', () => {
    const { core, store, conversation } = seedConversation(tempDir());
    const first = store.runs.admit(conversation.id, 'req-1', fingerprintInput({ prompt: 'hi' }));
    expect(first).toMatchObject({ attached: false, run: { state: 'admitted' } });
    expect(() => store.runs.admit(conversation.id, 'req-2', fingerprintInput({ prompt: 'hello' }))).toThrow(
      expect.objectContaining({ code: 'conversation_busy' }),
    );
    core.close();
  });

  it('attaches the same request id with the same input to the existing run', () => {
    const { core, store, conversation } = seedConversation(tempDir());
    const first = store.runs.admit(conversation.id, 'req-1', fingerprintInput({ prompt: 'hi', tools: ['a'] }));
    const again = store.runs.admit(conversation.id, 'req-1', fingerprintInput({ tools: ['a'], prompt: 'hi' }));
    expect(again).toEqual({ attached: true, run: first.run });
    core.close();
  });

  it('refuses the same request id with a different input, even after the run ended', () => {
    const { core, store, conversation } = seedConversation(tempDir());
    const { run } = store.runs.admit(conversation.id, 'req-1', fingerprintInput({ prompt: 'hi' }));
    store.runs.transition(run.id, 'running');
    store.runs.transition(run.id, 'succeeded');
    expect(() => store.runs.admit(conversation.id, 'req-1', fingerprintInput({ prompt: 'different' }))).toThrow(
      expect.objectContaining({ code: 'request_conflict' }),
    );
    core.close();
  });

  it('releases the conversation once the run reaches a final state', () => {
    const { core, store, conversation } = seedConversation(tempDir());
    const { run } = store.runs.admit(conversation.id, 'req-1', 'f1');
    store.runs.transition(run.id, 'running');
    store.runs.transition(run.id, 'stopping');
    store.runs.transition(run.id, 'stopped', 'stopped by the user');
    expect(store.runs.admit(conversation.id, 'req-2', 'f2').attached).toBe(false);
    core.close();
  });

  it('refuses illegal state moves', () => {
    const { core, store, conversation } = seedConversation(tempDir());
    const { run } = store.runs.admit(conversation.id, 'req-1', 'f1');
    store.runs.transition(run.id, 'running');
    store.runs.transition(run.id, 'succeeded');
    expect(() => store.runs.transition(run.id, 'running')).toThrow(/cannot go from succeeded to running/);
    core.close();
  });
});

describe('uncertain runs (R8)', () => {
  it('marks runs of a dead process uncertain at start-up and keeps their reservation until reconciled', () => {
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
    expect(() => reopened.runs.admit(conversation.id, 'req-2', 'f2')).toThrow(/has an uncertain run .*ward reconcile/);
    expect(() => reopened.runs.transition(run.id, 'failed')).toThrow(/cannot go from uncertain/);

    reopened.runs.reconcile(run.id, 'failed', 'checked upstream: nothing was written');
    expect(reopened.runs.admit(conversation.id, 'req-2', 'f2').attached).toBe(false);
    restarted.close();
  });

  it('leaves runs of a live process alone', () => {
    const { core, store, conversation } = seedConversation(tempDir());
    const liveOwner = new RunRepository(store.db, process.ppid);
    const { run } = liveOwner.admit(conversation.id, 'req-1', 'f1');
    expect(store.runs.markOrphansUncertain()).toEqual([]);
    expect(store.runs.get(run.id).state).toBe('admitted');
    core.close();
  });

  it('marks a run uncertain when its owner pid now belongs to another process (pid reused, e.g. after a reboot)', () => {
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
