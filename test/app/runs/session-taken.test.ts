import { describe, expect, it } from 'vitest';
import { userTextIn } from '../../fixtures/model-provider/provider.js';
import { closeHarnessesAfterEach, payloads, startHarness, type Harness } from './harness.js';

let harness: Harness | undefined;
closeHarnessesAfterEach();

describe('when Ward and the CLI disagree about the native session (R4)', () => {
  it('test_resumes_a_session_the_cli_persisted_although_ward_never_noted_it_instead_of_reusing_session_id', async () => {
    harness = await startHarness([{ blocks: [{ type: 'text', text: 'First.' }] }, { blocks: [{ type: 'text', text: 'Second.' }] }]);
    const first = harness.service.startTurn({ namespace: harness.ns, prompt: 'first question gamma' });
    expect((await first.done).state).toBe('succeeded');
    // As if Ward had died after the CLI wrote its transcript but before Ward noted it.
    const store = harness.core.store(harness.ns);
    store.db.prepare('UPDATE conversations SET session_started = 0 WHERE id = ?').run(first.conversationId);

    const second = harness.service.startTurn({ namespace: harness.ns, conversationId: first.conversationId, prompt: 'again' });
    const outcome = await second.done;
    expect(outcome.state, outcome.reason ?? '').toBe('succeeded');
    expect(payloads(harness.events(first.conversationId), 'run_started').map((started) => started.session)).toEqual(['new', 'resume']);
    expect(userTextIn(harness.provider.conversationRequests()[1]!)).toContain('first question gamma');
    expect(store.conversations.get(first.conversationId).sessionStarted).toBe(true);
  });
});
