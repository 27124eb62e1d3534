import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { claudeConfigDir } from '../../../main/app/runs/workspace.js';
import { userTextIn } from '../../fixtures/model-provider/provider.js';
import { closeHarnessesAfterEach, payloads, startHarness, type Harness } from './harness.js';

let harness: Harness | undefined;
closeHarnessesAfterEach();

function transcripts(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.jsonl')).map((file) => path.join(dir, file));
}

describe('native sessions across turns (R4)', () => {
  it('test_resumes_the_same_native_session_on_the_second_turn_with_the_earlier_messages', async () => {
    harness = await startHarness([{ blocks: [{ type: 'text', text: 'First answer.' }] }, { blocks: [{ type: 'text', text: 'Second answer.' }] }]);
    const first = harness.service.startTurn({ namespace: harness.ns, prompt: 'first question alpha' });
    expect((await first.done).state).toBe('succeeded');
    const conversation = harness.core.store(harness.ns).conversations.get(first.conversationId);
    expect(conversation.sessionStarted).toBe(true);

    const second = harness.service.startTurn({ namespace: harness.ns, conversationId: first.conversationId, prompt: 'second question beta' });
    expect((await second.done).state).toBe('succeeded');
    expect(payloads(harness.events(first.conversationId), 'run_started').map((started) => started.session)).toEqual(['new', 'resume']);

    const [one, two] = harness.provider.conversationRequests();
    expect(one!.headers['x-claude-code-session-id']).toBe(conversation.cliSessionId);
    expect(two!.headers['x-claude-code-session-id']).toBe(conversation.cliSessionId);
    // The model sees the first turn again: the CLI resumed, it did not start over.
    expect(userTextIn(two!)).toContain('first question alpha');
    expect(JSON.stringify(two!.body!.messages)).toContain('First answer.');
    expect(userTextIn(two!)).toContain('second question beta');
  });

  it('test_a_named_workspace_is_the_working_folder_of_every_turn_of_its_conversation_and_cannot_change', async () => {
    harness = await startHarness([{ blocks: [{ type: 'text', text: 'One.' }] }, { blocks: [{ type: 'text', text: 'Two.' }] }]);
    const workspace = fs.mkdtempSync(path.join(harness.tmpRoot, '..', 'ward-named-workspace-'));
    try {
      const first = harness.service.startTurn({ namespace: harness.ns, prompt: 'where are you?', workspace });
      expect((await first.done).state).toBe('succeeded');
      expect(userTextIn(harness.provider.conversationRequests()[0]!)).toContain(`Primary working directory: ${workspace}`);
      expect(() => harness!.service.startTurn({ namespace: harness!.ns, conversationId: first.conversationId, prompt: 'elsewhere', workspace: harness!.tmpRoot })).toThrow(
        /a conversation keeps one workspace/,
      );
      const second = harness.service.startTurn({ namespace: harness.ns, conversationId: first.conversationId, prompt: 'still there?' });
      expect((await second.done).state).toBe('succeeded');
      expect(userTextIn(harness.provider.conversationRequests()[1]!)).toContain(`Primary working directory: ${workspace}`);
    } finally {
      fs.rmSync(workspace, { recursive: true, force: true });
    }
  });

  it('test_fails_the_turn_visibly_when_the_native_transcript_was_deleted_and_starts_nothing_new', async () => {
    harness = await startHarness([{ blocks: [{ type: 'text', text: 'First answer.' }] }, { blocks: [{ type: 'text', text: 'must not be used' }] }]);
    const first = harness.service.startTurn({ namespace: harness.ns, prompt: 'hello' });
    expect((await first.done).state).toBe('succeeded');
    const files = transcripts(path.join(claudeConfigDir(harness.home, harness.ns, first.conversationId), 'projects'));
    expect(files.length).toBe(1);
    fs.rmSync(files[0]!);

    const second = harness.service.startTurn({ namespace: harness.ns, conversationId: first.conversationId, prompt: 'are you there?' });
    const outcome = await second.done;
    expect(outcome.state).toBe('failed');
    expect(outcome.reason).toMatch(/native transcript .* is missing/);
    expect(outcome.reason).toMatch(/never starts a new conversation silently/);
    expect(payloads(harness.events(first.conversationId), 'run_finished').at(-1)).toMatchObject({ state: 'failed', reason: outcome.reason });
    expect(harness.provider.conversationRequests()).toHaveLength(1);
    expect(harness.provider.remaining()).toBe(1);
  });
});
