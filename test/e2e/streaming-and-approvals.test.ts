import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GrantStore } from '../../main/permissions/grant-store.js';
import { publishToolAgent, screenshot, startChat, useUiSuite, type UiHarness } from './harness/harness.js';

const suite = useUiSuite();
let harness: UiHarness | undefined;

describe('the chat streams the answer and places each approval in its own chat (real Chromium, real CLI)', () => {
  it('test_shows_partial_answer_text_while_the_turn_is_still_running_then_the_whole_answer_once', async () => {
    const words = ['Streaming', 'arrives', 'piece', 'by', 'piece', 'while', 'the', 'model', 'is', 'still', 'writing', 'FINALWORD.'];
    // 400 ms between word-sized deltas: the answer takes seconds to finish.
    harness = await suite.start({ script: [{ blocks: [{ type: 'text', text: words.join(' ') }], deltaDelayMs: 400 }] });
    const page = await harness.open();
    await startChat(page, 'default', 'Tell me slowly');

    const answer = page.locator('.message-assistant');
    await answer.filter({ hasText: 'Streaming arrives' }).waitFor();
    // Partial text is on screen while the turn runs: the end has not arrived and Stop is offered.
    await expect(answer.textContent()).resolves.not.toContain('FINALWORD');
    await expect(page.getByRole('button', { name: 'Stop', exact: true }).isVisible()).resolves.toBe(true);
    await screenshot(page, 'chat-streaming');

    await page.getByRole('button', { name: 'Send' }).waitFor({ timeout: 30_000 });
    await expect(answer.count()).resolves.toBe(1);
    await expect(answer.locator('.markdown').textContent()).resolves.toBe(words.join(' '));
    const store = harness.core.store(harness.ns);
    const conversation = store.conversations.list()[0]!;
    expect([...store.journal.read(conversation.id)].filter((event) => event.type === 'assistant_delta').length).toBeGreaterThan(1);
  });

  it('test_two_chats_with_the_same_agent_each_with_a_question_pending_each_prompt_shows_in_its_own_chat', async () => {
    const root = suite.tempDir('ward-e2e-files-');
    fs.mkdirSync(path.join(root, 'granted'));
    for (const name of ['alpha.txt', 'beta.txt']) fs.writeFileSync(path.join(root, name), `${name}\n`);
    harness = await suite.start({
      script: [
        { blocks: [{ type: 'tool_use', name: 'Read', input: { file_path: path.join(root, 'alpha.txt') } }] },
        { blocks: [{ type: 'tool_use', name: 'Read', input: { file_path: path.join(root, 'beta.txt') } }] },
        { blocks: [{ type: 'text', text: 'Alpha was read.' }] },
        { blocks: [{ type: 'text', text: 'Beta was read.' }] },
      ],
    });
    await publishToolAgent(harness);
    // Read is offered to the agent (granted inside one folder), so reads elsewhere are asked about.
    const store = harness.core.store(harness.ns);
    new GrantStore(store.db).add({ scope: 'agent', agentId: store.agents.get('tooly').agentId, effect: 'allow', kind: 'read', value: path.join(root, 'granted'), grantedBy: 'test' });
    const page = await harness.open();
    const chat = page.getByRole('region', { name: 'Chat' });
    const inChat = chat.getByTestId('approval');

    await startChat(page, 'tooly', 'read alpha');
    await inChat.filter({ hasText: 'alpha.txt' }).waitFor();
    await startChat(page, 'tooly', 'read beta');
    await inChat.filter({ hasText: 'beta.txt' }).waitFor();
    // In Beta's chat only Beta's question, on its Read call; Alpha's is a one-line notice and a mark in the list.
    await expect(inChat.count()).resolves.toBe(1);
    await expect(chat.getByTestId('tool-call').filter({ has: page.getByTestId('approval') }).locator('.tool-status').textContent()).resolves.toBe('waiting for you');
    await expect(page.getByTestId('approval').filter({ hasText: 'alpha.txt' }).count()).resolves.toBe(0);
    const elsewhere = page.getByTestId('approval-elsewhere');
    await expect(elsewhere.count()).resolves.toBe(1);
    await expect(elsewhere.textContent()).resolves.toMatch(/^Approval needed in “read alpha”: agent tooly wants to read .*alpha\.txtOpen it$/);
    const sessions = page.getByRole('list', { name: 'Sessions' });
    await expect(sessions.getByRole('button', { name: /read alpha/ }).textContent()).resolves.toContain('waiting for you');
    await screenshot(page, 'chat-approvals-two-chats');

    // In Alpha's chat, its own question is there and is answered there.
    await elsewhere.getByRole('button', { name: 'Open it' }).click();
    await page.getByRole('heading', { level: 1, name: 'read alpha' }).waitFor();
    await expect(inChat.count()).resolves.toBe(1);
    await expect(inChat.locator('h2').textContent()).resolves.toMatch(/wants to read .*alpha\.txt/);
    await chat.locator('[data-testid=approval][data-armed=true]').waitFor();
    await inChat.getByRole('button', { name: 'Allow once' }).click();
    await chat.getByText('Alpha was read.').waitFor({ timeout: 30_000 });

    await sessions.getByRole('button', { name: /read beta/ }).click();
    await page.getByRole('heading', { level: 1, name: 'read beta' }).waitFor();
    await expect(inChat.locator('h2').textContent()).resolves.toMatch(/wants to read .*beta\.txt/);
    await chat.locator('[data-testid=approval][data-armed=true]').waitFor();
    await inChat.getByRole('button', { name: 'Deny' }).click();
    await chat.getByText('Beta was read.').waitFor({ timeout: 30_000 });

    // Each decision is journaled in the conversation whose run asked.
    for (const [title, file, decision] of [
      ['read alpha', 'alpha.txt', 'allow'],
      ['read beta', 'beta.txt', 'deny'],
    ] as const) {
      const conversation = store.conversations.list().find((candidate) => candidate.title === title)!;
      const decisions = [...store.journal.read(conversation.id)].filter((event) => event.type === 'permission_decision').map((event) => event.payload as { value: string; decision: string });
      expect(decisions).toEqual([expect.objectContaining({ value: path.join(root, file), decision })]);
    }
  });
});
