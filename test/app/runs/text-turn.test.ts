import { describe, expect, it } from 'vitest';
import fs from 'node:fs';
import { WardApp } from '../../../main/app/ward-app.js';
import { closeHarnessesAfterEach, payloads, processGroupAlive, startHarness, types, type Harness } from './harness.js';
import { publishToolAgent } from './agents.js';

let harness: Harness | undefined;
closeHarnessesAfterEach();

describe('a text turn with the real CLI', () => {
  it('test_g4_streams_the_answer_into_the_journal_and_succeeds_with_the_tokens_the_gateway_read', async () => {
    harness = await startHarness([{ blocks: [{ type: 'text', text: 'Hello from the scripted model.' }], usage: { input_tokens: 21, output_tokens: 7 } }]);
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'Say hello' });
    const outcome = await handle.done;
    expect(outcome).toMatchObject({ state: 'succeeded', reason: null });
    const events = harness.events(handle.conversationId);
    // Streamed deltas (if the stream was slow enough to need any) are covered in streaming.test.ts.
    expect(types(events).filter((type) => type !== 'assistant_delta')).toEqual(['run_started', 'user_prompt', 'assistant_text', 'usage', 'run_finished']);
    expect(payloads(events, 'assistant_text')[0]).toEqual({ text: 'Hello from the scripted model.' });
    expect(payloads(events, 'usage')[0]).toMatchObject({ inputTokens: 21, outputTokens: 7 });
    // G4: the gateway read the same tokens from the stream it passed through.
    expect(payloads(events, 'model_call')).toContainEqual({ path: '/v1/messages', model: 'claude-sonnet-4-5', status: 200, durationMs: expect.any(Number), problem: null, usage: { inputTokens: 21, outputTokens: 7, cacheReadTokens: 0, cacheCreationTokens: 0 } });
    expect(payloads(events, 'run_finished')[0]).toEqual({ state: 'succeeded', reason: null, anchored: true });
    expect(harness.core.store(harness.ns).runs.get(handle.runId).state).toBe('succeeded');
    // The prompt reached the model, with the canary key in the header and nowhere else.
    const [request] = harness.provider.conversationRequests();
    expect(request!.headers['x-api-key']).toBe(harness.env.ANTHROPIC_API_KEY);
    expect(request!.rawBody).toContain('Say hello');
    // Nothing outlives the turn: the CLI's process group and the private run folder are gone.
    expect(processGroupAlive(handle.childPid()!)).toBe(false);
    expect(fs.readdirSync(harness.tmpRoot)).toEqual([]);
  });

  it("test_aborts_the_turn_when_the_childs_system_init_shows_the_broker_did_not_connect_r3", async () => {
    harness = await startHarness([{ blocks: [{ type: 'text', text: 'must not be asked' }] }]);
    // An agent with MCP tools: only its CLI is handed the broker.
    await publishToolAgent(harness);
    const real = harness.broker;
    // The real broker, but the child is handed a wrong capability: its MCP connection fails.
    const app = new WardApp({
      folder: harness.core,
      env: harness.env,
      run: { tmpRoot: harness.tmpRoot, broker: { register: (binding) => ({ ...real.register(binding), capability: 'wrong-capability-wrong-capability-wrong-cap' }) } },
    });
    const handle = (await app.runs()).startTurn({ namespace: harness.ns, agent: 'tooly', prompt: 'hello' });
    const outcome = await handle.done;
    await app.close();
    expect(outcome.state).toBe('failed');
    expect(outcome.reason).toMatch(/^aborted: the CLI could not connect to Ward's tool broker \(status [a-z-]+\)$/);
    // Killed at its init line: whatever the child did next is not part of the turn.
    expect(types(harness.events(handle.conversationId))).toEqual(['run_started', 'user_prompt', 'run_finished']);
    expect(processGroupAlive(handle.childPid()!)).toBe(false);
  });
});
