/**
 * Issue 12 #13 with the real CLI and the scripted provider: a provider that fails is shown as it
 * happens (each retry the CLI makes), and the CLI's error text is journaled as a provider error,
 * never as the agent's answer.
 */
import { describe, expect, it } from 'vitest';
import { formatLive } from '../../../main/cli/format-event.js';
import type { ScriptStep } from '../../fixtures/model-provider/provider.js';
import { closeHarnessesAfterEach, payloads, startHarness, types, type Harness } from './harness.js';

let harness: Harness | undefined;
closeHarnessesAfterEach();

const failing = (status: number, errorType: string, message: string): ScriptStep => ({ kind: 'http_error', status, errorType, message });

describe('a failing model provider', () => {
  it('test_each_retry_of_the_cli_is_journaled_and_printed_as_it_happens_and_the_turn_then_succeeds', async () => {
    harness = await startHarness([failing(500, 'api_error', 'boom'), failing(529, 'overloaded_error', 'busy'), { blocks: [{ type: 'text', text: 'finally' }] }]);
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'hi' });
    expect(await handle.done).toMatchObject({ state: 'succeeded' });
    const events = harness.events(handle.conversationId);
    expect(payloads(events, 'model_retry')).toEqual([
      expect.objectContaining({ attempt: 1, status: 500, error: 'server_error' }),
      expect.objectContaining({ attempt: 2, status: 529, error: 'overloaded' }),
    ]);
    const printed = events.flatMap((event) => formatLive(event) ?? []);
    expect(printed.filter((line) => line.stream === 'stderr').map((line) => line.text)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^ward: the model provider gave HTTP 500 \(server_error\); retry 1 of \d+ in \d+ s\n$/)]),
    );
    expect(payloads(events, 'assistant_text')).toEqual([{ text: 'finally' }]);
  });

  it('test_the_clis_error_text_is_a_provider_error_not_the_agents_answer', async () => {
    const refused = failing(400, 'invalid_request_error', 'prompt-refused-canary');
    harness = await startHarness([refused, refused, refused, refused]);
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'hi' });
    const outcome = await handle.done;
    expect(outcome.state).toBe('failed');
    expect(outcome.reason).toContain('prompt-refused-canary');
    const events = harness.events(handle.conversationId);
    expect(types(events)).not.toContain('assistant_text');
    expect(payloads(events, 'provider_error')[0]).toMatchObject({ text: expect.stringContaining('prompt-refused-canary') });
    const printed = events.flatMap((event) => formatLive(event) ?? []);
    expect(printed.filter((line) => line.stream === 'stdout').map((line) => line.text).join('')).not.toContain('prompt-refused-canary');
    expect(printed.some((line) => line.stream === 'stderr' && line.text.startsWith('ward: the model call failed') && line.text.includes('prompt-refused-canary'))).toBe(true);
  });

  it('test_a_provider_whose_name_does_not_resolve_fails_the_turn_without_retries_naming_the_host_and_how_to_change_it', async () => {
    // .invalid never resolves (RFC 2606): the CLI would retry a 502 ten times over minutes.
    harness = await startHarness([], { env: { WARD_MODEL_BASE_URL: 'https://api.ward-test.invalid' } });
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'hi' });
    const outcome = await handle.done;
    expect(outcome.state).toBe('failed');
    const events = harness.events(handle.conversationId);
    // Not retried as a passing failure (a 502 was retried 10 times over 2.5 minutes): the CLI
    // asks a few times as it does for any refused request, and each call names the host.
    expect(payloads(events, 'model_retry')).toEqual([]);
    const calls = payloads(events, 'model_call').filter((call) => call.path === '/v1/messages');
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.length).toBeLessThan(5);
    for (const call of calls) expect(call).toMatchObject({ status: 0, problem: expect.stringContaining('at api.ward-test.invalid could not be reached: the name does not resolve (ENOTFOUND)') });
    expect(outcome.reason).toContain('api.ward-test.invalid');
    expect(outcome.reason).toContain('WARD_MODEL_BASE_URL');
  });
});
