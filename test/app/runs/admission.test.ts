import { describe, expect, it } from 'vitest';
import { isWardError } from '../../../main/base/errors.js';
import { closeHarnessesAfterEach, startHarness, type Harness } from './harness.js';
import { until } from '../../support/wait.js';

let harness: Harness | undefined;
closeHarnessesAfterEach();

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

describe('admission (R7)', () => {
  it('test_refuses_a_concurrent_prompt_on_a_running_conversation', async () => {
    harness = await startHarness([{ blocks: [{ type: 'text', text: 'First.' }] }, { blocks: [{ type: 'text', text: 'slowly now and then' }], deltaDelayMs: 200 }]);
    const first = harness.service.startTurn({ namespace: harness.ns, prompt: 'one' });
    await first.done;
    const running = harness.service.startTurn({ namespace: harness.ns, conversationId: first.conversationId, prompt: 'two' });
    const error = thrown(() => harness!.service.startTurn({ namespace: harness!.ns, conversationId: first.conversationId, prompt: 'three' }));
    expect(isWardError(error, 'conversation_busy')).toBe(true);
    expect((error as Error).message).toMatch(/already has an? (admitted|running) run/);
    expect((await running.done).state).toBe('succeeded');
    expect(harness.provider.conversationRequests()).toHaveLength(2);
  });

  it('test_the_same_request_id_attaches_to_the_admitted_run_without_a_second_child', async () => {
    harness = await startHarness([{ blocks: [{ type: 'text', text: 'only once, slowly' }], deltaDelayMs: 150 }]);
    const first = harness.service.startTurn({ namespace: harness.ns, prompt: 'hello', requestId: 'req-1' });
    await until(() => first.childPid() !== undefined, 'the child');
    const again = harness.service.startTurn({ namespace: harness.ns, prompt: 'hello', requestId: 'req-1' });
    expect(again).toMatchObject({ attached: true, runId: first.runId, conversationId: first.conversationId });
    expect(again.childPid()).toBe(first.childPid());
    expect((await again.done).state).toBe('succeeded');
    // After it finished, the same request still attaches (to the finished run), and nothing new starts.
    const late = harness.service.startTurn({ namespace: harness.ns, prompt: 'hello', requestId: 'req-1' });
    expect(late).toMatchObject({ attached: true, runId: first.runId });
    expect((await late.done).state).toBe('succeeded');
    expect(harness.provider.conversationRequests()).toHaveLength(1);
    expect(harness.core.store(harness.ns).conversations.list()).toHaveLength(1);

    const conflict = thrown(() => harness!.service.startTurn({ namespace: harness!.ns, prompt: 'something else', requestId: 'req-1' }));
    expect(isWardError(conflict, 'request_conflict')).toBe(true);
  });
});
