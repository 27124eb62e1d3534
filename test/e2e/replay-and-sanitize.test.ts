import { describe, expect, it } from 'vitest';
import { journalEvent } from '../../common/events.js';
import { RUN_STARTED } from '../support/events.js';
import { screenshot, seedConversation, seedUncertainRun, timelineOf, useUiSuite, type UiHarness } from './harness/harness.js';
import { HOSTILE } from './harness/hostile.js';

const suite = useUiSuite();
let harness: UiHarness | undefined;

describe('the chat in real Chromium, bridged to the real core', () => {
  it('test_replays_a_conversation_journaled_through_the_store_messages_a_tool_call_with_its_duration_stopped', async () => {
    harness = await suite.start();
    const conversation = seedConversation(harness, 'Trip planning');
    const { journal } = harness.core.store(harness.ns);
    const runId = '00000000-0000-4000-8000-000000000001';
    journal.appendMany(
      conversation.id,
      [
        journalEvent('run_started', RUN_STARTED),
        journalEvent('user_prompt', { text: 'What is the weather in Lisbon?' }),
        journalEvent('assistant_text', { text: 'Let me check the **forecast**.' }),
        journalEvent('tool_call', { toolUseId: 'toolu_1', tool: 'weather_lookup', arguments: { city: 'Lisbon' } }),
        journalEvent('tool_result', { toolUseId: 'toolu_1', tool: 'weather_lookup', ok: true, bytes: 42, durationMs: 1234, errorCode: null, preview: '', previewTruncated: false }),
        journalEvent('assistant_text', { text: 'Sunny, 24 °C.' }),
        journalEvent('run_finished', { state: 'stopped', reason: 'stopped by the user' }),
      ].map((event) => ({ ...event, runId })),
    );

    const page = await harness.open();
    await page.getByRole('button', { name: /Trip planning/ }).click();
    await timelineOf(page).getByText('Sunny, 24 °C.').waitFor();
    await expect(timelineOf(page).getByText('What is the weather in Lisbon?').isVisible()).resolves.toBe(true);
    await expect(page.locator('strong', { hasText: 'forecast' }).count()).resolves.toBe(1);
    const tool = page.getByTestId('tool-call');
    await expect(tool.textContent()).resolves.toMatch(/weather_lookup.*done.*1\.2 s/);
    await tool.getByRole('button').click();
    await expect(tool.textContent()).resolves.toContain('"city": "Lisbon"');
    await expect(tool.textContent()).resolves.toContain('42 bytes returned to the model');
    // A stop is shown as Stopped, not as an error.
    await expect(page.getByTestId('run-state').textContent()).resolves.toBe('Stopped');
    await expect(page.locator('[role=alert]').count()).resolves.toBe(0);
    await screenshot(page, 'chat-replayed');

    // A reload reopens the same conversation and replays it from the journal.
    await page.reload();
    await timelineOf(page).getByText('Sunny, 24 °C.').waitFor();
    await expect(timelineOf(page).getByText('What is the weather in Lisbon?').isVisible()).resolves.toBe(true);
  });

  it('test_renders_hostile_model_output_inert_no_img_no_script_no_javascript_or_data_link_onerror_never_fires', async () => {
    harness = await suite.start();
    const conversation = seedConversation(harness, 'Hostile output');
    const runId = '00000000-0000-4000-8000-000000000002';
    harness.core.store(harness.ns).journal.appendMany(
      conversation.id,
      [
        journalEvent('run_started', RUN_STARTED),
        journalEvent('user_prompt', { text: 'Show me <img src=x onerror="window.__pwned = 5">' }),
        journalEvent('assistant_text', { text: HOSTILE }),
        journalEvent('run_finished', { state: 'succeeded', reason: null }),
      ].map((event) => ({ ...event, runId })),
    );
    const page = await harness.open();
    await page.getByRole('button', { name: /Hostile output/ }).click();
    await timelineOf(page).getByText('Plain').waitFor();

    await expect(page.locator('img').count()).resolves.toBe(0);
    await expect(page.locator('iframe').count()).resolves.toBe(0);
    await expect(page.locator('.markdown script, .markdown b').count()).resolves.toBe(0);
    await expect(page.locator('[href^="javascript:" i], [href^="data:" i], body [src]').count()).resolves.toBe(0);
    await expect(page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).resolves.toBeUndefined();
    // The raw HTML is visible as text, so the person sees what the model sent.
    await expect(page.getByText('<img src=x onerror="window.__pwned = 1">', { exact: false }).count()).resolves.toBeGreaterThan(0);
    // The javascript: and data: links are inert text; the https link is a marked, untrusted action.
    await expect(page.locator('.inert-link').allTextContents()).resolves.toEqual(['click me', 'data']);
    // (The iframe's URL, shown as text, is a bare link and becomes one too.)
    await expect(page.locator('.untrusted-link').allTextContents()).resolves.toEqual(['https://example.com', 'docs']);
    const link = page.locator('.untrusted-link', { hasText: 'docs' });
    await expect(link.getAttribute('title')).resolves.toContain('Link from the model');
    // Clicking asks main to confirm and open it; the page itself never navigates.
    const before = page.url();
    await link.click();
    await expect.poll(() => harness!.opened.map((url) => url.href)).toEqual(['https://example.com/docs']);
    expect(page.url()).toBe(before);
    await screenshot(page, 'chat-hostile-output-inert');
  });

  it('test_shows_an_uncertain_run_with_a_banner_reconciling_it_frees_the_conversation_for_a_new_prompt', async () => {
    harness = await suite.start();
    const { run, store } = seedUncertainRun(harness, 'Lost run', [
      journalEvent('run_started', RUN_STARTED),
      journalEvent('user_prompt', { text: 'rename every file in the project' }),
      journalEvent('tool_call', { toolUseId: 'toolu_9', tool: 'rename', arguments: { all: true } }),
    ]);

    const page = await harness.open();
    await page.getByRole('button', { name: /Lost run/ }).click();
    const banner = page.getByTestId('uncertain-banner');
    await banner.waitFor();
    await expect(banner.textContent()).resolves.toContain('pid 4242');
    await expect(page.getByRole('button', { name: 'Send' }).isDisabled()).resolves.toBe(true);
    await screenshot(page, 'chat-uncertain');

    await banner.getByRole('radio', { name: /succeeded/ }).check();
    await banner.getByRole('textbox', { name: 'Note' }).fill('checked the folder: all renamed');
    await banner.getByRole('button', { name: 'Reconcile' }).click();
    await banner.waitFor({ state: 'detached' });
    await page.getByText('Reconciled as succeeded: checked the folder: all renamed').waitFor();
    expect(store.runs.get(run.id)).toMatchObject({ state: 'succeeded', reason: 'reconciled: checked the folder: all renamed' });
    await page.getByRole('textbox', { name: 'Message' }).fill('next');
    await expect(page.getByRole('button', { name: 'Send' }).isEnabled()).resolves.toBe(true);
  });

  it('test_answers_an_unknown_channel_and_a_malformed_payload_with_clear_typed_errors_and_keeps_working', async () => {
    harness = await suite.start();
    const page = await harness.open();
    const call = (channel: string, payload: unknown) =>
      page.evaluate(([c, p]) => (window as unknown as { __wardInvoke(c: unknown, p: unknown): Promise<unknown> }).__wardInvoke(c, p), [channel, payload] as const);

    await expect(call('shell.exec', { command: 'id' })).resolves.toEqual({
      ok: false,
      error: { code: 'unknown_channel', message: 'unknown channel "shell.exec": not in the Ward IPC contract' },
    });
    await expect(call('conversations.get', { namespace: 'default', conversationId: 'not-a-uuid' })).resolves.toEqual({
      ok: false,
      error: { code: 'invalid_payload', message: 'conversations.get: payload.conversationId: expected an id (UUID)' },
    });
    await expect(call('namespaces.create', { name: 'ok', extra: true })).resolves.toMatchObject({
      ok: false,
      error: { code: 'invalid_payload', message: expect.stringContaining('extra') },
    });
    await expect(call('namespaces.create', 'Bad Name')).resolves.toMatchObject({ ok: false, error: { code: 'invalid_payload' } });
    // The purpose-named API reaches the same checks, and a good call still succeeds afterwards.
    const viaApi = await page.evaluate(() =>
      (window as unknown as { ward: { runs: { send(p: unknown): Promise<unknown> } } }).ward.runs.send({ namespace: 'default', conversationId: 'x', requestId: 'y', prompt: '' }),
    );
    expect(viaApi).toMatchObject({ ok: false, error: { code: 'invalid_payload', message: expect.stringMatching(/^runs\.send: payload\.conversationId: expected an id/) } });
    await expect(call('namespaces.list', {})).resolves.toEqual({ ok: true, value: [{ name: 'default' }] });
  });
});
