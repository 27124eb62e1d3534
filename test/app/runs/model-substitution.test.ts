/**
 * The model a run asks for and the model the pinned CLI sends can differ: the CLI replaces some
 * model names with others. The real CLI and the scripted provider: the journal records the model
 * of every call, the person is told of a substitution, and the admin policy judges the model sent.
 */
import { describe, expect, it } from 'vitest';
import { formatLive } from '../../../main/cli/format-event.js';
import { closeHarnessesAfterEach, payloads, startHarness, type Harness } from './harness.js';

let harness: Harness | undefined;
closeHarnessesAfterEach();

/** What the provider was asked for, call by call. */
const sentModels = (h: Harness) => h.provider.conversationRequests().map((request) => (JSON.parse(request.rawBody) as { model: string }).model);

describe('the model a turn uses', () => {
  it('test_every_model_call_records_the_model_sent_and_a_model_the_cli_replaced_is_told_to_the_person', async () => {
    harness = await startHarness([{ blocks: [{ type: 'text', text: 'hello' }] }], { env: { WARD_MODEL: 'claude-opus-4-1' } });
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'hi' });
    expect(await handle.done).toMatchObject({ state: 'succeeded' });
    const sent = sentModels(harness)[0]!;
    const events = harness.events(handle.conversationId);
    expect(payloads(events, 'run_started')[0]).toMatchObject({ model: 'claude-opus-4-1' });
    // What the gateway saw is what the provider got, on every call.
    const calls = payloads(events, 'model_call').filter((call) => call.path === '/v1/messages');
    expect(calls.map((call) => call.model)).toEqual(sentModels(harness));
    // The pinned CLI (2.1.328) sends claude-opus-4-1 as another model.
    expect(sent).not.toBe('claude-opus-4-1');
    expect(payloads(events, 'model_substituted')).toEqual([{ runModel: 'claude-opus-4-1', requested: sent }]);
    const printed = events.flatMap((event) => formatLive(event) ?? []).filter((line) => line.stream === 'stderr');
    expect(printed.map((line) => line.text)).toContain(`ward: the CLI asked the provider for ${sent}, not the run's model claude-opus-4-1 (the pinned CLI replaces some model names with others)\n`);
  });

  it('test_a_model_named_as_the_cli_sends_it_is_not_reported_as_replaced', async () => {
    harness = await startHarness([{ blocks: [{ type: 'text', text: 'hello' }] }], { env: { WARD_MODEL: 'claude-sonnet-4-5' } });
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'hi' });
    expect(await handle.done).toMatchObject({ state: 'succeeded' });
    expect(sentModels(harness)[0]).toBe('claude-sonnet-4-5');
    const events = harness.events(handle.conversationId);
    expect(payloads(events, 'model_call').find((call) => call.path === '/v1/messages')).toMatchObject({ model: 'claude-sonnet-4-5' });
    expect(payloads(events, 'model_substituted')).toEqual([]);
  });
});
