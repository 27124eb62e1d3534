import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { GrantStore } from '../../main/permissions/grant-store.js';
import { describe, expect, it } from 'vitest';
import { timelineOf, publishToolAgent, screenshot, startChat, useUiSuite, type UiHarness } from './harness/harness.js';
import { childrenOf } from '../../main/runner/process-tree.js';

const suite = useUiSuite();
let harness: UiHarness | undefined;

/** A folder the agent may read (a stored agent grant) and a secret file outside it. */
function readFixture(): { granted: string; secret: string } {
  const root = suite.tempDir('ward-e2e-files-');
  const granted = path.join(root, 'granted');
  fs.mkdirSync(granted);
  fs.mkdirSync(path.join(root, 'outside'));
  const secret = path.join(root, 'outside', 'secret.txt');
  fs.writeFileSync(secret, 'the secret file\n');
  return { granted, secret };
}

/** `pid` and every process under it. */
function processTree(pid: number): number[] {
  return [pid, ...childrenOf(pid).flatMap(processTree)];
}

/** The agent may read `dir` (as if granted "always" earlier): Read is offered, and asked about outside it. */
function grantRead(harness: UiHarness, agent: string, dir: string): void {
  const store = harness.core.store(harness.ns);
  new GrantStore(store.db).add({ scope: 'agent', agentId: store.agents.get(agent).agentId, effect: 'allow', kind: 'read', value: dir, grantedBy: 'test' });
}

function decisions(harness: UiHarness): unknown[] {
  const store = harness.core.store(harness.ns);
  const conversation = store.conversations.list()[0]!;
  return [...store.journal.read(conversation.id)].filter((event) => event.type === 'permission_decision').map((event) => event.payload);
}

/** Answers the approval prompt a tool use outside the grants raises (P3). */
async function answerApproval(page: Page, button: 'Allow once' | 'Allow in this conversation' | 'Deny', shot?: string, question?: RegExp): Promise<void> {
  const approval = page.getByTestId('approval');
  await approval.waitFor();
  if (question !== undefined) await expect(approval.locator('h2').textContent()).resolves.toMatch(question);
  await expect(approval.locator('.approval-time').textContent()).resolves.toMatch(/^\d+ s left — no answer denies$/);
  if (shot !== undefined) await screenshot(page, shot);
  // A new approval takes no input for its first moments (a keystroke meant elsewhere must not answer it).
  await page.locator('[data-testid=approval][data-armed=true]').waitFor();
  await approval.getByRole('button', { name: button }).click();
  await approval.waitFor({ state: 'detached' });
}

describe('live runs in real Chromium: real CLI, scripted provider, real MCP fixture', () => {
  it('test_sends_a_prompt_shows_the_answer_as_it_arrives_and_the_tool_call_in_the_timeline_with_its_duration', async () => {
    harness = await suite.start({
      script: [
        { blocks: [{ type: 'text', text: 'Let me echo that.' }, { type: 'tool_use', name: 'mcp__ward__fixture__echo', input: { text: 'hello tools' } }] },
        { blocks: [{ type: 'text', text: 'The echo came back: **hello tools**.' }], deltaDelayMs: 20 },
      ],
    });
    await publishToolAgent(harness);
    const page = await harness.open();
    await startChat(page, 'tooly', 'Please echo hello tools');

    // The first block arrives while the turn is still going (it is followed by a tool call).
    await timelineOf(page).getByText('Let me echo that.').waitFor();
    await timelineOf(page).getByText('The echo came back:').waitFor();
    // The answer streams in 20 ms deltas: the bold part may still be on its way.
    await page.locator('strong', { hasText: 'hello tools' }).waitFor();
    await expect(page.locator('strong', { hasText: 'hello tools' }).count()).resolves.toBe(1);
    await expect(timelineOf(page).getByText('Please echo hello tools').isVisible()).resolves.toBe(true);
    const tool = page.getByTestId('tool-call');
    await expect(tool.locator('.tool-name').textContent()).resolves.toBe('fixture__echo');
    await expect(tool.locator('.tool-status').textContent()).resolves.toBe('done');
    await expect(tool.locator('.tool-duration').textContent()).resolves.toMatch(/^\d+(\.\d)? (ms|s)$/);
    await tool.getByRole('button').click();
    await expect(tool.locator('.tool-args').textContent()).resolves.toContain('"text": "hello tools"');
    // The result the model got, as the timeline's preview.
    await expect(tool.locator('.tool-output').textContent()).resolves.toBe('hello tools');
    // The turn ended: the composer offers Send again, with no status left over.
    await page.getByRole('button', { name: 'Send' }).waitFor();
    await expect(page.getByTestId('run-state').textContent()).resolves.toBe('');
    await screenshot(page, 'chat-live-tool-call');
  });

  it('test_writing_in_a_chat_whose_cli_has_ended_starts_it_before_send_and_that_cli_answers_the_message', async () => {
    harness = await suite.start({ script: [{ blocks: [{ type: 'text', text: 'Remember the word heron.' }] }, { blocks: [{ type: 'text', text: 'It was the grey bird.' }] }] });
    const page = await harness.open();
    await startChat(page, 'default', 'Pick a word.');
    await timelineOf(page).getByText('Remember the word heron.').waitFor();
    await page.getByRole('button', { name: 'Send' }).waitFor();
    // The chat's CLI ends, as after an idle close or a restart of Ward.
    for (const pid of harness.cliChildren()) process.kill(-pid, 'SIGKILL');
    await expect.poll(() => harness!.cliChildren(), { timeout: 10_000 }).toEqual([]);
    const conversation = harness.core.store(harness.ns).conversations.list()[0]!;
    const eventsBefore = [...harness.core.store(harness.ns).journal.read(conversation.id)].length;

    // Starting to write starts the chat's CLI, before anything is sent.
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.pressSequentially('Which');
    await expect.poll(() => harness!.cliChildren().length, { timeout: 20_000 }).toBe(1);
    const ahead = harness.cliChildren()[0];
    expect([...harness.core.store(harness.ns).journal.read(conversation.id)].length).toBe(eventsBefore);
    expect(harness.provider.conversationRequests().length).toBe(1);

    await box.pressSequentially(' word?');
    await box.press('Enter');
    await timelineOf(page).getByText('It was the grey bird.').waitFor();
    // That CLI took the message, with the conversation so far.
    expect(harness.cliChildren()).toEqual([ahead]);
    expect(harness.provider.conversationRequests()[1]!.rawBody).toContain('Remember the word heron.');
  });

  it('test_stop_during_a_slow_tool_shows_stopping_until_the_cli_is_gone_also_after_a_reload_then_stopped_not_an_error', async () => {
    harness = await suite.start({
      // Ward cancels the slow call itself at Stop; the grace a hung CLI gets outlasts a reload on a loaded machine.
      script: [{ blocks: [{ type: 'text', text: 'Working on it.' }, { type: 'tool_use', name: 'mcp__ward__fixture__slow', input: { ms: 60_000 } }] }, { blocks: [{ type: 'text', text: 'unused' }] }],
      stopGraceMs: 12_000,
    });
    await publishToolAgent(harness);
    const page = await harness.open();
    await startChat(page, 'tooly', 'do the slow thing');
    await page.getByTestId('tool-call').filter({ hasText: 'running…' }).waitFor();
    await expect(page.getByRole('button', { name: 'Send' }).count()).resolves.toBe(0);

    // A hung CLI: frozen, it ignores the interrupt, and is killed only when the grace period is over.
    for (const pid of harness.cliChildren().flatMap(processTree)) process.kill(pid, 'SIGSTOP');
    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    // Until the CLI is gone the control says Stopping… and accepts no new prompt.
    const stopping = page.getByRole('button', { name: 'Stopping…' });
    await stopping.waitFor();
    await expect(stopping.isDisabled()).resolves.toBe(true);
    await screenshot(page, 'chat-stopping');
    // A reload while it stops keeps showing Stopping… (the store and journal say so).
    await page.reload();
    await page.getByRole('button', { name: 'Stopping…' }).waitFor();

    await page.getByTestId('run-state').filter({ hasText: 'Stopped' }).waitFor({ timeout: 30_000 });
    await expect(page.locator('.notice-stopped').textContent()).resolves.toBe('Stopped');
    await expect(page.locator('[role=alert]').count()).resolves.toBe(0);
    await expect(page.getByRole('button', { name: 'Send' }).isVisible()).resolves.toBe(true);
    const conversation = harness.core.store(harness.ns).conversations.list()[0]!;
    expect(harness.core.store(harness.ns).runs.listFor(conversation.id).map((run) => run.state)).toEqual(['stopped']);
    expect(harness.cliChildren()).toEqual([]);
    // The session list follows: the conversation no longer shows a run.
    await expect.poll(() => page.getByRole('list', { name: 'Sessions' }).locator('.session-meta').textContent(), { timeout: 10_000 }).toBe('tooly');
    await screenshot(page, 'chat-stopped');
  });

  it('test_asks_before_a_read_outside_the_granted_folder_allow_once_lets_that_one_read_through', async () => {
    const files = readFixture();
    harness = await suite.start({
      script: [{ blocks: [{ type: 'tool_use', name: 'Read', input: { file_path: files.secret } }] }, { blocks: [{ type: 'text', text: 'I read the file.' }] }],
      // An approval during a turn cannot widen its OS sandbox (test/runner/sandbox.test.ts): the approval flow, unsandboxed.
      env: { WARD_SANDBOX: 'off' },
    });
    await publishToolAgent(harness);
    grantRead(harness, 'tooly', files.granted);
    const page = await harness.open();
    await startChat(page, 'tooly', 'read the secret file');
    await answerApproval(page, 'Allow once', 'approval-prompt', /wants to read .*secret\.txt/);
    await timelineOf(page).getByText('I read the file.').waitFor();
    const tool = page.getByTestId('tool-call');
    await expect(tool.locator('.tool-name').textContent()).resolves.toBe('Read');
    await expect(tool.locator('.tool-status').textContent()).resolves.toBe('done');
    expect(decisions(harness)).toEqual([expect.objectContaining({ tool: 'Read', decision: 'allow', answerer: expect.objectContaining({ by: 'person', answer: 'once' }) })]);
  });

  it('test_an_approval_pending_across_a_reload_is_shown_again_deny_refuses_the_read_shown_as_an_error_in_the_timeline', async () => {
    const files = readFixture();
    harness = await suite.start({
      script: [{ blocks: [{ type: 'tool_use', name: 'Read', input: { file_path: files.secret } }] }, { blocks: [{ type: 'text', text: 'The read was not allowed.' }] }],
    });
    await publishToolAgent(harness);
    grantRead(harness, 'tooly', files.granted);
    const page = await harness.open();
    await startChat(page, 'tooly', 'read the secret file');
    // A question still waiting is shown again after a reload.
    await page.getByTestId('approval').waitFor();
    await page.reload();
    await answerApproval(page, 'Deny');
    await timelineOf(page).getByText('The read was not allowed.').waitFor();
    const tool = page.getByTestId('tool-call');
    // Issue 31: a neutral "Denied by you", not a red error card saying "(denied by the person)".
    await expect(tool.locator('.tool-status').textContent()).resolves.toBe('Denied by you');
    await expect(tool.getAttribute('class')).resolves.not.toContain('tool-error');
    // The person's deny is folded into the card of the call it was about.
    await tool.locator('.tool-summary').click();
    await expect(tool.locator('.permission-deny').textContent()).resolves.toMatch(/Denied by you$/);
    await expect(tool.textContent()).resolves.not.toContain('denied by the person');
    // The decision is in the journal with who made it.
    expect(decisions(harness)).toEqual([expect.objectContaining({ tool: 'Read', decision: 'deny', answerer: expect.objectContaining({ by: 'person', answer: 'deny' }) })]);
    await screenshot(page, 'chat-approval-denied');
  });

  it('test_a_reload_mid_run_replays_the_conversation_and_follows_the_same_run_without_starting_a_second_cli', async () => {
    harness = await suite.start({
      script: [
        { blocks: [{ type: 'text', text: 'Starting the long task.' }, { type: 'tool_use', name: 'mcp__ward__fixture__slow', input: { ms: 2_500 } }] },
        { blocks: [{ type: 'text', text: 'All done after the reload.' }] },
      ],
    });
    await publishToolAgent(harness);
    const page = await harness.open();
    await startChat(page, 'tooly', 'run the long task');
    await page.getByTestId('tool-call').filter({ hasText: 'running…' }).waitFor();
    const children = harness.cliChildren();
    expect(children).toHaveLength(1);
    const requestsBefore = harness.provider.conversationRequests().length;

    await page.reload();
    // The reopened page replays what happened so far and shows the run as still going.
    await timelineOf(page).getByText('Starting the long task.').waitFor();
    await expect(timelineOf(page).getByText('run the long task').isVisible()).resolves.toBe(true);
    await expect(page.getByRole('button', { name: 'Stop', exact: true }).isVisible()).resolves.toBe(true);
    expect(harness.cliChildren()).toEqual(children);

    // It then follows the live run to its end.
    await timelineOf(page).getByText('All done after the reload.').waitFor({ timeout: 30_000 });
    await expect(page.getByTestId('tool-call').locator('.tool-status').textContent()).resolves.toBe('done');
    const store = harness.core.store(harness.ns);
    const conversation = store.conversations.list()[0]!;
    expect(store.runs.listFor(conversation.id)).toHaveLength(1);
    // One more model call (the tool result), none repeated: the reload started nothing.
    expect(harness.provider.conversationRequests().length).toBe(requestsBefore + 1);
  });
});
