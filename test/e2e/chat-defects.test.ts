// The defects that cost people their work in the desktop chat (issue 17), each pinned in real
// Chromium against the real core: whole answers, approvals that never steal a keystroke, one
// escaper for every piece of model text, opening at the latest message, text that wraps and
// links that survive, an uncertain run the person settles, and editors that keep what was typed.
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { GrantStore } from '../../main/permissions/grant-store.js';
import { journalEvent } from '../../common/events.js';
import { startHttpFixture } from '../fixtures/mcp-servers/http.js';
import { RUN_STARTED } from '../support/events.js';
import { addRemoteConnection, publishToolAgent, screenshot, seedConversation, seedUncertainRun, useUiSuite, type UiHarness } from './harness/harness.js';

const suite = useUiSuite();

const RUN = '00000000-0000-4000-8000-0000000000a1';

function journal(harness: UiHarness, conversationId: string, events: { type: string; payload: unknown }[]): void {
  harness.core.store(harness.ns).journal.appendMany(
    conversationId,
    events.map((event) => ({ ...event, runId: RUN })),
  );
}

async function openChat(harness: UiHarness, title: RegExp): Promise<Page> {
  const page = await harness.open();
  await page.getByRole('list', { name: 'Sessions' }).getByRole('button', { name: title }).click();
  return page;
}

const conversationOf = (page: Page) => page.getByRole('region', { name: 'Conversation' });

/** Every text node on the page, as the person reads it. */
const pageText = (page: Page) => page.evaluate(() => document.body.innerText);

describe('defects of the desktop chat (issue 17), in real Chromium', () => {
  it('test_an_answer_over_4000_characters_is_shown_whole_and_long_tool_arguments_are_cut_with_show_all_and_copy', async () => {
    const harness = await suite.start();
    const conversation = seedConversation(harness, 'Long answer');
    const answer = `The beginning. ${'Every word of this answer matters to the person reading it. '.repeat(150)}THE LAST WORDS.`;
    expect(answer.length).toBeGreaterThan(9_000);
    const bigArgument = `${'abcdefghij'.repeat(600)}ARGUMENT-END`;
    journal(harness, conversation.id, [
      journalEvent('run_started', RUN_STARTED),
      journalEvent('user_prompt', { text: 'Write a long answer' }),
      journalEvent('tool_call', { toolUseId: 'toolu_big', tool: 'write_report', arguments: { body: bigArgument } }),
      journalEvent('tool_result', { toolUseId: 'toolu_big', tool: 'write_report', ok: true, bytes: 12, durationMs: 5, errorCode: null, preview: 'report saved', previewTruncated: false }),
      journalEvent('assistant_text', { text: answer }),
      journalEvent('run_finished', { state: 'succeeded', reason: null }),
    ]);
    const page = await openChat(harness, /Long answer/);
    await page.getByText('THE LAST WORDS.').waitFor({ timeout: 10_000 });
    const text = await pageText(page);
    expect(text).not.toMatch(/more characters/);
    await expect(page.locator('.message-assistant .markdown').textContent()).resolves.toBe(answer);

    // Tool arguments keep a cap, with the rest one click away and Copy taking the whole value.
    await harness.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(harness.url).origin });
    const tool = page.getByTestId('tool-call');
    await tool.getByRole('button', { name: /write_report/ }).click();
    const args = tool.locator('.tool-args');
    await expect(args.textContent()).resolves.not.toContain('ARGUMENT-END');
    await tool.getByRole('button', { name: 'Show all arguments' }).click();
    await expect(args.textContent()).resolves.toContain('ARGUMENT-END');
    await tool.getByRole('button', { name: 'Copy arguments' }).click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toContain('ARGUMENT-END');
    expect(JSON.parse(await page.evaluate(() => navigator.clipboard.readText()))).toEqual({ body: bigArgument });
  });

  it('test_an_approval_that_appears_while_the_person_types_elsewhere_never_takes_focus_or_a_keystroke_escape_on_it_denies', async () => {
    const root = suite.tempDir('ward-e2e-focus-');
    fs.mkdirSync(path.join(root, 'granted'));
    fs.writeFileSync(path.join(root, 'notes.txt'), 'notes\n');
    const harness = await suite.start({
      script: [{ blocks: [{ type: 'tool_use', name: 'Read', input: { file_path: path.join(root, 'notes.txt') } }] }, { blocks: [{ type: 'text', text: 'Done reading.' }] }],
      env: { WARD_SANDBOX: 'off' },
    });
    await publishToolAgent(harness);
    const store = harness.core.store(harness.ns);
    new GrantStore(store.db).add({ scope: 'agent', agentId: store.agents.get('tooly').agentId, effect: 'allow', kind: 'read', value: path.join(root, 'granted'), grantedBy: 'test' });
    const conversation = seedConversation(harness, 'Typing elsewhere', 'tooly');
    const page = await openChat(harness, /Typing elsewhere/);
    await page.getByRole('textbox', { name: 'Message' }).waitFor();

    const search = page.getByRole('searchbox', { name: 'Search sessions' });
    await search.click();
    await page.keyboard.type('abc');
    (await harness.desktop.app.runs()).startTurn({ namespace: harness.ns, conversationId: conversation.id, prompt: 'read my notes' });
    const approval = page.getByTestId('approval');
    await approval.waitFor({ timeout: 30_000 });
    // The person goes on typing; Space and Enter would answer a focused button.
    await page.keyboard.type(' x');
    await page.keyboard.press('Enter');
    await expect(search.inputValue()).resolves.toBe('abc x');
    await expect(page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).resolves.toBe('Search sessions');
    const pending = () =>
      page.evaluate(async () => {
        const ward = (window as unknown as { ward: { approvals: { list(p: unknown): Promise<{ value: unknown[] }> } } }).ward;
        return (await ward.approvals.list({ namespace: 'default' })).value.length;
      });
    await expect(pending()).resolves.toBe(1);
    expect([...store.journal.read(conversation.id)].filter((event) => event.type === 'permission_decision')).toEqual([]);

    // Escape answers only when the approval itself has focus (and it took input): then it is the person's deny.
    await page.locator('[data-testid=approval][data-armed=true]').waitFor();
    await approval.getByRole('button', { name: 'Deny' }).focus();
    await page.keyboard.press('Escape');
    await page.getByText('Done reading.').waitFor({ timeout: 30_000 });
    const decisions = [...store.journal.read(conversation.id)].filter((event) => event.type === 'permission_decision').map((event) => event.payload);
    expect(decisions).toEqual([expect.objectContaining({ decision: 'deny', answerer: { by: 'person', answer: 'deny' } })]);
  });

  it('test_bidi_overrides_zero_width_and_control_characters_are_escaped_in_answers_tool_names_arguments_and_titles_ansi_is_stripped', async () => {
    const harness = await suite.start();
    const conversation = seedConversation(harness, 'invoice\u202Efdp.exe');
    journal(harness, conversation.id, [
      journalEvent('run_started', RUN_STARTED),
      journalEvent('user_prompt', { text: 'open invoice\u202Efdp.exe' }),
      journalEvent('assistant_text', { text: 'I opened invoice\u202Efdp.exe for you\u200B. Status: \u001b[31mred\u001b[0m done.' }),
      journalEvent('tool_call', { toolUseId: 'toolu_b', tool: 'open\u202Efdp.exe', arguments: { file: 'a\u200Bb\u2066c' } }),
      journalEvent('tool_result', { toolUseId: 'toolu_b', tool: 'open\u202Efdp.exe', ok: true, bytes: 5, durationMs: 1, errorCode: null, preview: '\u001b[1;32mgreen\u001b[0m', previewTruncated: false }),
      journalEvent('run_finished', { state: 'succeeded', reason: null }),
    ]);
    const page = await openChat(harness, /invoice/);
    await conversationOf(page).getByText('for you').waitFor();
    await page.getByTestId('tool-call').getByRole('button', { name: /open/ }).first().click();
    await page.locator('.tool-output').waitFor();
    const text = await pageText(page);
    // Nothing invisible or reordering reached the screen; each is shown as its escape instead.
    expect(text).not.toMatch(/[\u202a-\u202e\u2066-\u2069\u200b-\u200f\u0000-\u0008\u000b-\u001f]/);
    await expect(page.getByRole('list', { name: 'Sessions' }).textContent()).resolves.toContain('invoice\\u{202e}fdp.exe');
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('invoice\\u{202e}fdp.exe');
    await expect(page.locator('.message-user').textContent()).resolves.toContain('open invoice\\u{202e}fdp.exe');
    await expect(page.locator('.message-assistant .markdown').textContent()).resolves.toBe('I opened invoice\\u{202e}fdp.exe for you\\u{200b}. Status: red done.');
    await expect(page.getByTestId('tool-call').locator('.tool-name').first().textContent()).resolves.toBe('open\\u{202e}fdp.exe');
    await expect(page.locator('.tool-args').textContent()).resolves.toContain('a\\u{200b}b\\u{2066}c');
    await expect(page.locator('.tool-output').textContent()).resolves.toBe('green');
  });

  it('test_a_10_000_message_conversation_opens_at_its_latest_message_and_offers_jump_to_latest_when_scrolled_up', async () => {
    const harness = await suite.start();
    const conversation = seedConversation(harness, 'Ten thousand');
    harness.core.store(harness.ns).journal.appendMany(
      conversation.id,
      Array.from({ length: 10_000 }, (_, index) => ({ type: index % 2 === 0 ? 'user_prompt' : 'assistant_text', payload: { text: `Message ${index}: a short line.` } })),
    );
    const page = await harness.context.newPage();
    // Records the rows of the very first frame that shows any.
    await page.addInitScript(() => {
      const probe = window as unknown as { __firstRows?: string[] };
      const observer = new MutationObserver(() => {
        const rows = [...document.querySelectorAll('.vrow')];
        if (rows.length === 0) return;
        observer.disconnect();
        probe.__firstRows = rows.map((row) => row.textContent ?? '');
      });
      observer.observe(document, { childList: true, subtree: true });
    });
    await page.goto(harness.url);
    await page.getByRole('list', { name: 'Sessions' }).getByRole('button', { name: /Ten thousand/ }).click();
    await page.waitForFunction(() => (window as unknown as { __firstRows?: string[] }).__firstRows !== undefined, undefined, { timeout: 10_000 });
    const first = await page.evaluate(() => (window as unknown as { __firstRows: string[] }).__firstRows.join('\n'));
    expect(first).toContain('Message 9999:');
    expect(first).not.toContain('Message 99:');

    // Once the whole history is in, the person is still at the latest message.
    const latest = conversationOf(page).getByText('Message 9999:');
    await latest.waitFor();
    await page.waitForFunction(() => document.querySelector('.vlist')!.scrollHeight > 10_000 * 40, undefined, { timeout: 30_000 });
    await expect(latest.isVisible()).resolves.toBe(true);
    await expect(page.getByRole('button', { name: 'Jump to latest' }).count()).resolves.toBe(0);
    // Scrolled up, "Jump to latest" brings them back.
    await page.locator('.vlist').hover();
    for (let step = 0; step < 10; step++) await page.mouse.wheel(0, -2_000);
    const jump = page.getByRole('button', { name: 'Jump to latest' });
    await jump.waitFor();
    await jump.click();
    await latest.waitFor();
    await expect.poll(() => latest.isVisible()).toBe(true);
    await jump.waitFor({ state: 'detached' });
  });

  it('test_long_words_and_urls_wrap_inside_the_column_links_with_parentheses_open_whole_a_link_too_long_to_open_is_not_offered', async () => {
    const harness = await suite.start();
    const conversation = seedConversation(harness, 'Wrapping');
    const longUrl = `https://example.com/${'segment'.repeat(60)}`;
    const tooLong = `https://example.com/${'y'.repeat(2_100)}`;
    journal(harness, conversation.id, [
      journalEvent('user_prompt', { text: `unbroken ${'W'.repeat(500)}` }),
      journalEvent(
        'assistant_text',
        {
          text: [
            `An unbroken word: ${'A'.repeat(700)}`,
            '',
            `A bare long URL: ${longUrl}`,
            '',
            'See [Ward (surname)](https://en.wikipedia.org/wiki/Ward_(surname)) or https://en.wikipedia.org/wiki/Ward_(surname).',
            '',
            `And [a link too long](${tooLong}).`,
          ].join('\n'),
        },
      ),
    ]);
    const page = await openChat(harness, /Wrapping/);
    await conversationOf(page).getByText('An unbroken word').waitFor();
    // Nothing runs off the right edge of the conversation.
    const overflow = await page.evaluate(() => {
      const list = document.querySelector<HTMLElement>('.vlist')!;
      const right = list.getBoundingClientRect().right;
      return {
        scroll: list.scrollWidth - list.clientWidth,
        past: [...list.querySelectorAll('*')].filter((element) => element.getBoundingClientRect().right > right + 1).map((element) => element.className),
      };
    });
    expect(overflow).toEqual({ scroll: 0, past: [] });
    await screenshot(page, 'chat-long-words');

    await page.getByRole('button', { name: 'Ward (surname)' }).click();
    await expect.poll(() => harness.opened.map((url) => url.href)).toEqual(['https://en.wikipedia.org/wiki/Ward_(surname)']);
    await page.locator('.untrusted-link', { hasText: 'https://en.wikipedia.org/wiki/Ward_(surname)' }).click();
    await expect.poll(() => harness.opened.length).toBe(2);
    expect(harness.opened[1]!.href).toBe('https://en.wikipedia.org/wiki/Ward_(surname)');
    // A link longer than Ward opens is shown as text that says why, never offered and then refused.
    await expect(page.locator('.untrusted-link', { hasText: 'a link too long' }).count()).resolves.toBe(0);
    await expect(page.locator('.inert-link', { hasText: 'a link too long' }).getAttribute('title')).resolves.toMatch(/too long/);
    await expect(page.locator('[role=alert]').count()).resolves.toBe(0);
  });

  it('test_an_uncertain_run_asks_the_person_to_choose_its_outcome_none_is_preselected_and_the_composer_says_what_to_do', async () => {
    const harness = await suite.start();
    const { run, store } = seedUncertainRun(harness, 'Lost run', [journalEvent('run_started', RUN_STARTED), journalEvent('user_prompt', { text: 'rename every file' })]);
    const page = await openChat(harness, /Lost run/);
    const banner = page.getByTestId('uncertain-banner');
    await banner.waitFor();
    // Sentences end where they end.
    await expect(banner.textContent()).resolves.toMatch(/its outcome is unknown\. Check what its tools did/);
    const outcomes = banner.getByRole('radio');
    await expect(outcomes.count()).resolves.toBe(3);
    for (const radio of await outcomes.all()) await expect(radio.isChecked()).resolves.toBe(false);
    await expect(banner.getByRole('button', { name: 'Reconcile' }).isDisabled()).resolves.toBe(true);
    const composer = page.getByRole('textbox', { name: 'Message' });
    await expect(composer.getAttribute('placeholder')).resolves.toBe('Record what the unfinished run did (above) to send a new message');
    await screenshot(page, 'chat-uncertain-choose');

    await banner.getByRole('radio', { name: /failed/ }).check();
    await banner.getByRole('button', { name: 'Reconcile' }).click();
    await banner.waitFor({ state: 'detached' });
    expect(store.runs.get(run.id)).toMatchObject({ state: 'failed' });
  });

  it('test_a_refused_grant_keeps_what_was_typed_errors_speak_the_form_one_tool_and_removing_a_connection_or_the_key_asks_first', async () => {
    const harness = await suite.start();
    await publishToolAgent(harness, 'tooly', ['echo']);
    const server = await startHttpFixture();
    try {
      const page = await harness.open();
      await page.getByRole('button', { name: 'Agents' }).click();
      await expect(page.getByRole('listitem').filter({ hasText: 'tooly' }).first().textContent()).resolves.toMatch(/1 tool\b(?!s)/);
      await page.getByRole('button', { name: 'tooly' }).click();
      const permissions = page.getByRole('region', { name: 'Permissions' });
      await permissions.getByRole('combobox', { name: 'Allow or deny' }).selectOption('deny');
      await permissions.getByRole('combobox', { name: 'Kind' }).selectOption('net');
      await permissions.getByRole('textbox', { name: 'Entries' }).fill('http://bad host/');
      await permissions.getByRole('button', { name: 'Grant' }).click();
      const alert = page.getByRole('alert');
      await alert.waitFor();
      await expect(alert.textContent()).resolves.not.toMatch(/--(allow|deny)-/);
      await expect(alert.textContent()).resolves.toMatch(/^Deny net: /);
      await expect(permissions.getByRole('textbox', { name: 'Entries' }).inputValue()).resolves.toBe('http://bad host/');

      // Removing a connection asks first; Cancel keeps it.
      await page.getByRole('button', { name: 'Connections' }).click();
      await addRemoteConnection(page, 'tracker', server.url);
      const card = page.getByTestId('connection');
      await card.waitFor();
      await card.getByRole('button', { name: 'Remove' }).click();
      const confirm = page.getByRole('alertdialog', { name: /Remove tracker/ });
      await confirm.waitFor();
      await confirm.getByRole('button', { name: 'Cancel' }).click();
      await confirm.waitFor({ state: 'detached' });
      await expect(card.count()).resolves.toBe(1);
      await card.getByRole('button', { name: 'Remove' }).click();
      await confirm.getByRole('button', { name: 'Remove' }).click();
      await card.waitFor({ state: 'detached' });

      // So does removing the model key.
      await page.getByRole('button', { name: 'Settings' }).click();
      await page.getByLabel('New key').fill('sk-ant-confirm-removal-0123456789');
      await page.getByRole('button', { name: 'Store key' }).click();
      await page.getByText('Key stored', { exact: true }).waitFor();
      await page.getByRole('button', { name: 'Remove key' }).click();
      const removeKey = page.getByRole('alertdialog', { name: /Remove the model key/ });
      await removeKey.waitFor();
      await removeKey.getByRole('button', { name: 'Cancel' }).click();
      await expect.poll(() => page.getByTestId('key-state').textContent()).toMatch(/^A key is stored/);
      await page.getByRole('button', { name: 'Remove key' }).click();
      await removeKey.getByRole('button', { name: 'Remove key' }).click();
      await expect.poll(() => page.getByTestId('key-state').textContent()).toBe('No key is stored.');
    } finally {
      await server.close();
    }
  });
});
