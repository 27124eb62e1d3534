import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApprovalQueue } from '../../../main/permissions/approval-queue.js';
import { GrantStore } from '../../../main/permissions/grant-store.js';
import { publishToolAgent } from './agents.js';
import { startHarness, type Harness } from './harness.js';
import { until } from '../../support/wait.js';

let harness: Harness | undefined;
let root: string | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  if (root !== undefined) fs.rmSync(root, { recursive: true, force: true });
  root = undefined;
});

describe('a permission question names the conversation and run that ask (P3)', () => {
  it('test_two_runs_of_the_same_agent_at_once_each_pending_question_carries_its_own_conversation_and_run', async () => {
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ward-attribution-')));
    fs.mkdirSync(path.join(root, 'granted'));
    const read = (name: string) => ({ blocks: [{ type: 'tool_use' as const, name: 'Read', input: { file_path: path.join(root!, name) } }] });
    const queue = new ApprovalQueue(60_000);
    harness = await startHarness([read('alpha.txt'), read('beta.txt'), { blocks: [{ type: 'text', text: 'a' }] }, { blocks: [{ type: 'text', text: 'b' }] }], { prompter: queue });
    await publishToolAgent(harness);
    const store = harness.core.store(harness.ns);
    // Read is offered (granted in one folder), so reads elsewhere are asked about.
    new GrantStore(store.db).add({ scope: 'agent', agentId: store.agents.get('tooly').agentId, effect: 'allow', kind: 'read', value: path.join(root, 'granted'), grantedBy: 'test' });

    const alpha = harness.service.startTurn({ namespace: harness.ns, agent: 'tooly', prompt: 'read alpha' });
    await until(() => queue.pending(harness!.ns).length === 1, "alpha's question");
    const beta = harness.service.startTurn({ namespace: harness.ns, agent: 'tooly', prompt: 'read beta' });
    await until(() => queue.pending(harness!.ns).length === 2, "beta's question");

    const pending = queue.pending(harness.ns);
    expect(pending.map((view) => [view.agent, view.conversationId, view.runId, /alpha|beta/.exec(view.summary)?.[0]])).toEqual([
      ['tooly', alpha.conversationId, alpha.runId, 'alpha'],
      ['tooly', beta.conversationId, beta.runId, 'beta'],
    ]);
    expect(alpha.conversationId).not.toBe(beta.conversationId);
    for (const view of pending) queue.answer(harness.ns, view.id, 'deny');
    expect((await alpha.done).state).toBe('succeeded');
    expect((await beta.done).state).toBe('succeeded');
  });
});
