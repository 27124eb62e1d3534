/**
 * Issue 28: the process that sends the journal to the audit sink is `kill -9`'d in the middle of
 * a batch and started again: every event reaches a real rsyslog, the ids unique after dedupe,
 * nothing missing (the cursor moved only for batches rsyslog took, so the one cut short is resent).
 * "Mid-batch" is made exact, whatever the sender's speed: a relay holds the third connection's
 * ending, so rsyslog has read that batch in full while the sender still waits to count it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { seedConversation } from '../support/seed.js';
import { tempDir } from '../support/temp.js';
import { freePort, makeTestCa, Rsyslog } from '../support/rsyslog.js';
import { REPO_ROOT } from '../support/ward-cli.js';
import { CloseHoldingRelay } from '../support/close-holding-relay.js';

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

function startSender(home: string, port: number, caFile: string): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'test', 'audit', 'delivery-child.ts'), home, String(port), caFile, '5000'], {
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

    const relay = new CloseHoldingRelay(rsyslog.port, 3);
    cleanups.push(() => relay.stop());
    const first = startSender(home, await relay.start(), ca.caFile);
    const exited = new Promise((resolve) => first.once('exit', resolve));
    // The third batch: its sender has ended the stream, rsyslog writes it out, its close is held.
    await relay.senderEndedHeldConnection;
    await waitFor(() => new Set(rsyslog.ids()).size > taken(), 'rsyslog to write the held batch out');
    expect(taken()).toBe(10_000);
    first.kill('SIGKILL');
    await exited;
    const atKill = { received: new Set(rsyslog.ids()).size, taken: taken() };
    expect(atKill.received).toBeGreaterThan(atKill.taken);
    expect(atKill.taken).toBeLessThan(journaled.length);

    startSender(home, rsyslog.port, ca.caFile);
    await waitFor(() => store.audit.backlog().count === 0, 'the backlog to drain after the restart');
    const received = rsyslog.ids();
    expect(new Set(received).size).toBe(journaled.length);
    expect([...new Set(received)].sort()).toEqual([...journaled].sort());
    // The batch cut short was sent again whole: some ids arrived twice, and dedupe by id handles it.
    expect(received.length).toBeGreaterThan(journaled.length);
  }, 240_000);
});
