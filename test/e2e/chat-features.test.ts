// What a Claude Code companion needs beyond the defects (issue 17), in real Chromium on the real
// core: a project folder for a new chat, "always allow for this agent", attention for approvals
// out of sight, usage per turn and chat, the switcher and the keyboard, and Markdown that reads well.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GrantStore } from '../../main/permissions/grant-store.js';
import { journalEvent } from '../../common/events.js';
import { RUN_STARTED } from '../support/events.js';
import { publishToolAgent, seedConversation, timelineOf, useUiSuite, type UiHarness } from './harness/harness.js';
import { auditScreen } from './harness/axe.js';

const suite = useUiSuite();

/** Read is offered to the agent (granted in one folder): reads elsewhere are asked about. */
function offerRead(harness: UiHarness, root: string): void {
  const store = harness.core.store(harness.ns);
  fs.mkdirSync(path.join(root, 'granted'), { recursive: true });
  new GrantStore(store.db).add({ scope: 'agent', agentId: store.agents.get('tooly').agentId, effect: 'allow', kind: 'read', value: path.join(root, 'granted'), grantedBy: 'test' });
}

describe('the desktop chat as a Claude Code companion (issue 17)', () => {
  it('test_ctrl_n_starts_a_chat_in_a_chosen_project_folder_shows_its_grants_before_the_first_turn_and_titles_it_from_the_prompt', async () => {
    const harness = await suite.start({ script: [{ blocks: [{ type: 'text', text: 'The notes say hello.' }], usage: { input_tokens: 1_200, output_tokens: 340 } }] });
    const project = suite.tempDir('ward-e2e-project-');
    const page = await harness.open();
    await page.getByText('Choose a session, or start a new chat.').waitFor();
    await page.keyboard.press('Control+n');
    await page.getByRole('heading', { level: 1, name: 'New chat' }).waitFor();
    // The composer has the focus: the person can type at once.
    await expect(page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).resolves.toBe('Message');

    // A folder inside Ward's own data is refused, with the reason.
    harness.folderChoice = harness.home;
    await page.getByRole('button', { name: 'Choose a folder…' }).click();
    await page.locator('.chosen-folder', { hasText: harness.home }).waitFor();
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('hello');
    await box.press('Enter');
    await expect(page.getByRole('alert').textContent()).resolves.toContain("Ward's data folder");

    harness.folderChoice = project;
    await page.getByRole('button', { name: 'Choose another folder…' }).click();
    await page.locator('.chosen-folder', { hasText: project }).waitFor();
    await page.getByRole('radio', { name: 'Read without asking' }).check();
    const grants = page.getByTestId('folder-grants');
    await expect(grants.textContent()).resolves.toContain(`May read ${project} (this chat)`);
    await expect(grants.textContent()).resolves.toContain('Anything else the agent tries');
    await auditScreen(page, 'new-chat-project-folder');

    await box.fill('Summarize the project notes\nand be brief');
    await box.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Summarize the project notes' }).waitFor();
    await timelineOf(page).getByText('The notes say hello.').waitFor({ timeout: 30_000 });
    await expect(page.title()).resolves.toBe('Summarize the project notes — Ward');
    await expect(page.locator('.chat-facts').textContent()).resolves.toContain(project);
    // What the turn used, under it, and for the whole chat.
    await expect.poll(() => page.getByTestId('turn-usage').last().textContent(), { timeout: 10_000 }).toMatch(/^Turn: .* in · 340 out/);
    await expect(page.getByTestId('chat-usage').textContent()).resolves.toMatch(/Total: .* in · 340 out/);

    const store = harness.core.store(harness.ns);
    const conversation = store.conversations.list().find((candidate) => candidate.title === 'Summarize the project notes')!;
    expect(conversation.workspace).toBe(project);
    expect(new GrantStore(store.db).activeRules(conversation.id, conversation.agentId)).toEqual([expect.objectContaining({ effect: 'allow', kind: 'read', value: project, source: 'conversation' })]);
    const started = [...store.journal.read(conversation.id)].find((event) => event.type === 'run_started')!;
    expect(started.payload).toMatchObject({ workspace: project });
    await auditScreen(page, 'chat-project-folder');
  });

  it('test_always_allow_for_this_agent_grants_every_chat_with_the_agent_and_a_background_approval_raises_a_notification_and_the_badge', async () => {
    const root = suite.tempDir('ward-e2e-always-');
    fs.writeFileSync(path.join(root, 'notes.txt'), 'notes\n');
    const harness = await suite.start({
      script: [{ blocks: [{ type: 'tool_use', name: 'Read', input: { file_path: path.join(root, 'notes.txt') } }] }, { blocks: [{ type: 'text', text: 'Read it.' }] }],
      env: { WARD_SANDBOX: 'off' },
    });
    await publishToolAgent(harness);
    offerRead(harness, root);
    const conversation = seedConversation(harness, 'Always allowed', 'tooly');
    const page = await harness.open();
    await page.getByRole('list', { name: 'Sessions' }).getByRole('button', { name: /Always allowed/ }).click();
    await page.getByRole('textbox', { name: 'Message' }).waitFor();

    // Ward's window is in the background when the question comes.
    harness.attention.focused = false;
    (await harness.desktop.app.runs()).startTurn({ namespace: harness.ns, conversationId: conversation.id, prompt: 'read my notes' });
    const approval = page.getByTestId('approval');
    await approval.waitFor({ timeout: 30_000 });
    await expect.poll(() => harness.attention.notes).toEqual([{ title: 'Ward: approval needed', body: expect.stringMatching(/^Agent tooly wants to read .*notes\.txt$/) }]);
    expect(harness.attention.badges.at(-1)).toBe(1);
    // The status region says it once, naming the chat.
    await expect.poll(() => page.getByTestId('announcer').textContent()).toMatch(/^Approval needed in “Always allowed”: agent tooly wants to read/);

    await page.locator('[data-testid=approval][data-armed=true]').waitFor();
    await approval.getByRole('button', { name: 'Always allow for this agent' }).click();
    await timelineOf(page).getByText('Read it.').waitFor({ timeout: 30_000 });
    await expect.poll(() => harness.attention.badges.at(-1)).toBe(0);
    const store = harness.core.store(harness.ns);
    const decisions = [...store.journal.read(conversation.id)].filter((event) => event.type === 'permission_decision').map((event) => event.payload);
    expect(decisions).toEqual([expect.objectContaining({ decision: 'allow', answerer: { by: 'person', answer: 'always' } })]);
    // The grant is the agent's: every chat with it, shown in the agent editor.
    const agentId = store.agents.get('tooly').agentId;
    expect(new GrantStore(store.db).activeRules('another-chat', agentId)).toContainEqual(expect.objectContaining({ effect: 'allow', kind: 'read', value: path.join(root, 'notes.txt'), source: 'agent' }));
    // A notification click brings Ward forward.
    expect(harness.attention.clicks).toHaveLength(1);
  });

  it('test_ctrl_k_opens_a_session_by_typing_sessions_are_ordered_by_activity_with_a_preview_and_arrow_keys_move_between_them', async () => {
    const harness = await suite.start();
    const { journal } = harness.core.store(harness.ns);
    for (const [title, text] of [
      ['Quarterly report', 'Draft the summary'],
      ['Holiday plans', 'Where to in May?'],
      ['Release notes', 'List the fixes'],
    ] as const) {
      const conversation = seedConversation(harness, title);
      journal.append(conversation.id, journalEvent('user_prompt', { text }));
      await new Promise((resolve) => setTimeout(resolve, 15));
    }
    const page = await harness.open();
    const sessions = page.getByRole('list', { name: 'Sessions' });
    await sessions.getByText('Holiday plans').waitFor();
    await expect(sessions.locator('.session-title').allTextContents()).resolves.toEqual(['Release notes', 'Holiday plans', 'Quarterly report']);
    await expect(sessions.locator('.session-preview').allTextContents()).resolves.toEqual(['List the fixes', 'Where to in May?', 'Draft the summary']);

    await sessions.getByRole('button').first().focus();
    await page.keyboard.press('ArrowDown');
    await expect(page.evaluate(() => document.activeElement?.querySelector('.session-title')?.textContent)).resolves.toBe('Holiday plans');
    await page.keyboard.press('End');
    await expect(page.evaluate(() => document.activeElement?.querySelector('.session-title')?.textContent)).resolves.toBe('Quarterly report');

    await page.keyboard.press('Control+k');
    const switcher = page.getByRole('dialog', { name: 'Go to' });
    await switcher.waitFor();
    // The gate, as the person sees it: the whole list, a filter typed, and nothing matching.
    const input = switcher.getByRole('combobox', { name: 'Go to a session or page' });
    const shown = () => switcher.getByRole('option').allTextContents();
    await expect(shown()).resolves.toHaveLength(3 + 1 + 5);
    await auditScreen(page, 'switcher-list');
    await page.keyboard.type('holiday');
    await expect.poll(shown).toEqual([expect.stringContaining('Holiday plans')]);
    await expect(switcher.getByRole('option', { selected: true }).textContent()).resolves.toContain('Holiday plans');
    await auditScreen(page, 'switcher-filtered');
    await page.keyboard.type('zzz');
    await switcher.getByText('Nothing matches.').waitFor();
    await expect(shown()).resolves.toEqual([]);
    await auditScreen(page, 'switcher-no-match');
    await input.fill('page sett');
    await expect.poll(shown).toEqual(['Settings']);
    await input.fill('');
    // ↓ moves through the list and wraps at its end; Enter opens the one shown as selected.
    await page.keyboard.press('ArrowUp');
    await expect(switcher.getByRole('option', { selected: true }).textContent()).resolves.toBe('Policy');
    await input.fill('holiday');
    await page.keyboard.press('Enter');
    await switcher.waitFor({ state: 'hidden' });
    await page.getByRole('heading', { level: 1, name: 'Holiday plans' }).waitFor();
    await expect(page.title()).resolves.toBe('Holiday plans — Ward');
  });

  it('test_markdown_tables_nested_lists_and_code_with_copy_consecutive_tool_calls_grouped_with_their_errors_escape_stops_the_run', async () => {
    const harness = await suite.start({
      script: [{ blocks: [{ type: 'text', text: 'Working.' }, { type: 'tool_use', name: 'mcp__ward__fixture__slow', input: { ms: 4_000 } }] }, { blocks: [{ type: 'text', text: 'unused' }] }],
      stopGraceMs: 0,
    });
    await publishToolAgent(harness);
    const conversation = seedConversation(harness, 'Rich answer', 'tooly');
    const runId = '00000000-0000-4000-8000-0000000000c1';
    const calls = Array.from({ length: 5 }, (_, index) => [
      journalEvent('tool_call', { toolUseId: `t${index}`, tool: 'grep', arguments: { pattern: `needle${index}` } }),
      journalEvent('tool_result', { toolUseId: `t${index}`, tool: 'grep', ok: index !== 3, bytes: 10, durationMs: 4, errorCode: index === 3 ? 'tool_error' : null, preview: 'found', previewTruncated: false }),
    ]).flat();
    harness.core.store(harness.ns).journal.appendMany(
      conversation.id,
      [
        journalEvent('run_started', RUN_STARTED),
        journalEvent('user_prompt', { text: 'Compare the options' }),
        ...calls,
        journalEvent('assistant_text', {
          text: ['| Option | Cost |', '| --- | ---: |', '| Ward | 0 |', '| Other | 10 |', '', '- fruit', '  - apple', '  - pear', '- vegetables', '', '```ts', 'const ward = "safe";', '```'].join('\n'),
        }),
        journalEvent('run_finished', { state: 'succeeded', reason: null }),
      ].map((event) => ({ ...event, runId })),
    );
    await harness.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(harness.url).origin });
    const page = await harness.open();
    await page.getByRole('list', { name: 'Sessions' }).getByRole('button', { name: /Rich answer/ }).click();
    const timeline = timelineOf(page);
    await timeline.locator('table').waitFor();
    await expect(timeline.locator('th').allTextContents()).resolves.toEqual(['Option', 'Cost']);
    await expect(timeline.locator('td.align-right').allTextContents()).resolves.toEqual(['0', '10']);
    await expect(timeline.locator('li li').allTextContents()).resolves.toEqual(['apple', 'pear']);
    await timeline.getByRole('button', { name: 'Copy code' }).click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe('const ward = "safe";');

    const group = timeline.getByTestId('tool-group');
    await expect(group.textContent()).resolves.toMatch(/^Ran 5 tools · 1 error/);
    await auditScreen(page, 'chat-rich-answer');
    await group.getByRole('button').click();
    await expect(timeline.getByTestId('tool-call').count()).resolves.toBe(5);
    // The failed call opened by itself, on replay as it does live.
    await expect(timeline.getByTestId('tool-call').nth(3).locator('.tool-output').textContent()).resolves.toBe('found');

    // Escape stops a run from anywhere in the window.
    await page.getByRole('textbox', { name: 'Message' }).fill('now the slow thing');
    await page.getByRole('textbox', { name: 'Message' }).press('Enter');
    await timeline.getByTestId('tool-call').filter({ hasText: 'running…' }).waitFor({ timeout: 30_000 });
    await page.locator('.chat-header h1').click();
    await page.keyboard.press('Escape');
    await page.getByTestId('run-state').filter({ hasText: 'Stopped' }).waitFor({ timeout: 30_000 });
    const runs = harness.core.store(harness.ns).runs.listFor(conversation.id);
    expect(runs.map((run) => run.state)).toEqual(['stopped']);
  });
});
