import { afterEach, describe, expect, it } from 'vitest';
import { payloads, startHarness, types, type Harness } from './harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe('a text turn with the real CLI', () => {
  it('streams the answer into the journal and succeeds', async () => {
    harness = await startHarness([{ blocks: [{ type: 'text', text: 'Hello from the scripted model.' }], usage: { input_tokens: 21, output_tokens: 7 } }]);
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'Say hello' });
    const outcome = await handle.done;
    expect(outcome).toMatchObject({ state: 'succeeded', reason: null });
    const events = harness.events(handle.conversationId);
    expect(types(events)).toEqual(['run_started', 'user_prompt', 'assistant_text', 'usage', 'run_finished']);
    expect(payloads(events, 'assistant_text')[0]).toEqual({ text: 'Hello from the scripted model.' });
    expect(payloads(events, 'usage')[0]).toMatchObject({ inputTokens: 21, outputTokens: 7 });
    expect(payloads(events, 'run_finished')[0]).toEqual({ state: 'succeeded', reason: null });
    expect(harness.core.store(harness.ns).runs.get(handle.runId).state).toBe('succeeded');
    // The prompt reached the model, with the canary key in the header and nowhere else.
    const [request] = harness.provider.conversationRequests();
    expect(request!.headers['x-api-key']).toBe(harness.env.ANTHROPIC_API_KEY);
    expect(request!.rawBody).toContain('Say hello');
  });
});
