/**
 * Issue 28: the process that sends the journal to the audit sink is `kill -9`'d in the middle of
 * a batch and started again: every event reaches a real rsyslog, the ids unique after dedupe,
 * nothing missing (the cursor moved only for batches rsyslog took, so the one cut short is resent).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { seedConversation } from '../support/seed.js';
import { tempDir } from '../support/temp.js';
import { freePort, makeTestCa, Rsyslog } from '../support/rsyslog.js';
import { REPO_ROOT } from '../support/ward-cli.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function waitFor(check: () => boolean, what: string): Promise<void> {
  for (const deadline = Date.now() + 120_000; !check(); ) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function startSender(home: string, rsyslog: Rsyslog, caFile: string): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'test', 'audit', 'delivery-child.ts'), home, String(rsyslog.port), caFile, '5000'], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  cleanups.push(() => void child.kill('SIGKILL'));
  return child;
}

describe('audit sink: the sending process killed mid-batch', () => {
  it('test_ward_kill_9_mid_batch_then_restarted_delivers_every_event_ids_unique_after_dedupe', async () => {
    const dir = tempDir('ward-audit-kill-');
    const ca = makeTestCa(dir);
    const rsyslog = new Rsyslog(dir, await freePort(), ca);
    cleanups.push(() => rsyslog.stop('SIGKILL'));
    const home = path.join(dir, 'home');
    const { core, store, conversation } = seedConversation(home);
    cleanups.push(() => core.close());
    const inputs = Array.from({ length: 20_000 }, (_, index) => ({ type: 'usage', payload: { inputTokens: index, outputTokens: 1, cacheReadTokens: 0, cacheCreationTokens: 0, costUsd: null } }));
    const journaled = store.journal.appendMany(conversation.id, inputs).map((event) => event.hash);
    const taken = () => journaled.length - store.audit.backlog().count;
    await rsyslog.start();

    const first = startSender(home, rsyslog, ca.caFile);
    const exited = new Promise((resolve) => first.once('exit', resolve));
    // Mid-batch: rsyslog has events of a batch the cursor does not count yet. The sender is frozen
    // (SIGSTOP) at some moment while it sends, so its cursor cannot move; rsyslog is given a moment to
    // write what it read. If that moment fell between two batches, the sender runs on a little and
    // is frozen again (a bounded number of tries).
    await waitFor(() => rsyslog.ids().length > 0, 'the first events at rsyslog');
    let frozenMidBatch = false;
    for (let attempt = 0; attempt < 40 && !frozenMidBatch && taken() < journaled.length - 5_000; attempt++) {
      first.kill('SIGSTOP');
      const deadline = Date.now() + 1_500;
      while (!(frozenMidBatch = new Set(rsyslog.ids()).size > taken()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      if (!frozenMidBatch) {
        first.kill('SIGCONT');
        await new Promise((resolve) => setTimeout(resolve, 20 + attempt * 10));
      }
    }
    expect(frozenMidBatch).toBe(true);
    first.kill('SIGKILL');
    await exited;
    const atKill = { received: new Set(rsyslog.ids()).size, taken: taken() };
    expect(atKill.received).toBeGreaterThan(atKill.taken);
    expect(atKill.taken).toBeLessThan(journaled.length);

    startSender(home, rsyslog, ca.caFile);
    await waitFor(() => store.audit.backlog().count === 0, 'the backlog to drain after the restart');
    const received = rsyslog.ids();
    expect(new Set(received).size).toBe(journaled.length);
    expect([...new Set(received)].sort()).toEqual([...journaled].sort());
    // The batch cut short was sent again whole: some ids arrived twice, and dedupe by id handles it.
    expect(received.length).toBeGreaterThan(journaled.length);
  }, 240_000);
});
