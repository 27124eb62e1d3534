import { afterEach, describe, expect, it } from 'vitest';
import { payloads, startHarness, types, type Harness } from './harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe('a CLI that refuses the turn', () => {
  it('fails with the reason from its stderr when the native session id is already taken, and starts nothing', async () => {
    harness = await startHarness([{ blocks: [{ type: 'text', text: 'First.' }] }]);
    const first = harness.service.startTurn({ namespace: harness.ns, prompt: 'hello' });
    expect((await first.done).state).toBe('succeeded');
    // As if Ward had died after the CLI wrote its transcript but before Ward noted it: the next
    // turn uses --session-id again, and the CLI answers with a plain-text error on stdout.
    const store = harness.core.store(harness.ns);
    store.db.prepare('UPDATE conversations SET session_started = 0 WHERE id = ?').run(first.conversationId);

    const second = harness.service.startTurn({ namespace: harness.ns, conversationId: first.conversationId, prompt: 'again' });
    const outcome = await second.done;
    expect(outcome.state).toBe('failed');
    expect(outcome.reason).toMatch(/^the CLI exited with code 1 without a result: Error: Session ID [0-9a-f-]{36} is already in use\.$/);
    const events = harness.events(first.conversationId).filter((event) => event.runId === second.runId);
    expect(types(events)).toEqual(['run_started', 'user_prompt', 'run_finished']);
    expect(payloads(events, 'run_finished')[0]).toEqual({ state: 'failed', reason: outcome.reason });
    expect(harness.provider.conversationRequests()).toHaveLength(1);
  });
});
