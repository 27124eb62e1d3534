/**
 * Issue 26, rewinding the conversation, with the real pinned CLI and the scripted provider: the
 * next turn's CLI session forks before the message rewound to, so the model no longer sees it;
 * the journal keeps it, marked rewound (`conversation_rewound`, hash-chained); an undo brings the
 * session before back; `--both` rewinds the files too and changes nothing on a conflict; a CLI
 * kept warm for the chat is closed by the rewind.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsePermissionFlags } from '../../main/permissions/grants.js';
import { userTextIn, type ScriptStep } from '../fixtures/model-provider/provider.js';
import { closeHarnessesAfterEach, payloads, startHarness, type Harness } from '../app/runs/harness.js';
import { answer, turn, warmHarness } from '../app/runs/warm.js';
import { tempDir } from '../support/temp.js';
import { until } from '../support/wait.js';
import { wardInProcess } from '../support/ward-in-process.js';
import { treeHash } from './tree.js';

closeHarnessesAfterEach();

type Rewound = { toSeq: number; rewound: { from: number; to: number }[]; undid: number | null };

const wardEnv = (harness: Harness) => ({ ...harness.env, WARD_HOME: harness.home });

/** What the model was sent in the newest turn. */
const lastRequestText = (harness: Harness) => {
  const request = harness.provider.conversationRequests().at(-1)!;
  const assistant = (request.body?.messages ?? []).filter((message) => message.role === 'assistant').map((message) => JSON.stringify(message.content));
  return `${userTextIn(request)}\n${assistant.join('\n')}`;
};

const seqOf = (harness: Harness, conversationId: string, type: string, text: string) =>
  harness.events(conversationId).find((event) => event.type === type && (event.payload as { text: string }).text === text)!.seq;

async function rewind(harness: Harness, args: string[]): Promise<number> {
  const result = await wardInProcess(['rewind', ...args], wardEnv(harness));
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return Number(/\(event #(\d+); undo with --to/.exec(result.stdout)![1]);
}

describe('rewinding the conversation', () => {
  it('test_the_next_turn_after_a_conversation_rewind_no_longer_sends_the_rewound_message_which_stays_in_the_journal_marked_rewound_and_undo_brings_it_back', async () => {
    const harness = await startHarness(['answer one', 'answer two', 'answer three', 'answer four'].map(answer));
    const one = await turn(harness, 'message one');
    const conversationId = one.handle.conversationId;
    const two = await turn(harness, 'message two', conversationId);
    expect(two.outcome.state).toBe('succeeded');

    const rewindSeq = await rewind(harness, [conversationId, '--to', two.handle.runId, '--conversation']);
    const three = await turn(harness, 'message three', conversationId);
    expect(three.outcome.state).toBe('succeeded');
    const seen = lastRequestText(harness);
    expect(seen).toContain('message one');
    expect(seen).toContain('answer one');
    expect(seen).toContain('message three');
    expect(seen).not.toContain('message two');
    expect(seen).not.toContain('answer two');

    // The journal keeps message 2, inside the range the rewind marks, and its chain verifies.
    const events = harness.events(conversationId);
    const [rewound] = payloads<Rewound>(events, 'conversation_rewound');
    const messageTwo = seqOf(harness, conversationId, 'user_prompt', 'message two');
    expect(rewound!.rewound).toEqual([{ from: events.find((event) => event.runId === two.handle.runId)!.seq, to: rewindSeq - 1 }]);
    expect(messageTwo).toBeGreaterThanOrEqual(rewound!.rewound[0]!.from);
    expect(harness.core.store(harness.ns).journal.verify(conversationId).ok).toBe(true);
    const shown = await wardInProcess(['replay', conversationId], wardEnv(harness));
    expect(shown.stdout).toContain(`conversation rewound to before event #${rewound!.toSeq}`);
    const markdown = path.join(tempDir('ward-rewind-md-'), 'chat.md');
    expect((await wardInProcess(['export', conversationId, '--format', 'markdown', '--out', markdown], wardEnv(harness))).code).toBe(0);
    const transcript = fs.readFileSync(markdown, 'utf8');
    expect(transcript).toMatch(/### You · `[^`]+` \(rewound\)\n\n```\nmessage two/);
    expect(transcript).toMatch(/### You · `[^`]+`\n\n```\nmessage three/);

    // Undo: the session before the rewind comes back; the turn taken in the fork is the rewound one now.
    const undoSeq = await rewind(harness, [conversationId, '--to', String(rewindSeq), '--conversation']);
    await turn(harness, 'message four', conversationId);
    const afterUndo = lastRequestText(harness);
    expect(afterUndo).toContain('message two');
    expect(afterUndo).toContain('answer two');
    expect(afterUndo).not.toContain('message three');
    const undo = payloads<Rewound>(harness.events(conversationId), 'conversation_rewound')[1]!;
    expect(undo.undid).toBe(rewindSeq);
    expect(undo.rewound).toEqual([{ from: rewindSeq, to: undoSeq - 1 }]);
  });

  it('test_rewinding_to_before_the_first_message_starts_a_new_session_and_a_dry_run_changes_nothing', async () => {
    const harness = await startHarness(['answer one', 'answer two'].map(answer));
    const one = await turn(harness, 'message one');
    const conversationId = one.handle.conversationId;
    const dry = await wardInProcess(['rewind', conversationId, '--to', '1', '--conversation', '--dry-run'], wardEnv(harness));
    expect(dry.stdout).toContain('would be: conversation rewound to before event #1');
    expect(payloads(harness.events(conversationId), 'conversation_rewound')).toHaveLength(0);
    await rewind(harness, [conversationId, '--to', '1', '--conversation']);
    await turn(harness, 'message two', conversationId);
    expect(lastRequestText(harness)).not.toContain('message one');
  });

  it('test_rewind_both_refuses_on_a_file_conflict_changing_neither_files_nor_conversation_and_otherwise_rewinds_both', async () => {
    const workspace = path.join(fs.realpathSync(tempDir('ward-rewind-both-')), 'workspace');
    fs.mkdirSync(workspace);
    fs.writeFileSync(path.join(workspace, 'a.txt'), 'first\n');
    const write: ScriptStep = { blocks: [{ type: 'tool_use', name: 'Write', input: { file_path: path.join(workspace, 'b.txt'), content: 'second\n' } }] };
    const harness = await startHarness([answer('answer one'), write, answer('written'), answer('answer three')]);
    const permissions = parsePermissionFlags([`--allow-read=${workspace}`, `--allow-write=${workspace}`], workspace);
    const one = harness.service.startTurn({ namespace: harness.ns, prompt: 'message one', permissions, workspace });
    await one.done;
    const conversationId = one.conversationId;
    const before = treeHash(workspace);
    const two = harness.service.startTurn({ namespace: harness.ns, conversationId, prompt: 'message two', permissions, workspace });
    expect((await two.done).state).toBe('succeeded');
    expect(fs.readFileSync(path.join(workspace, 'b.txt'), 'utf8')).toBe('second\n');
    fs.writeFileSync(path.join(workspace, 'b.txt'), 'a person edited this\n');

    const refused = await wardInProcess(['rewind', conversationId, '--to', two.runId, '--both'], wardEnv(harness));
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('nothing was changed');
    expect(payloads(harness.events(conversationId), 'conversation_rewound')).toHaveLength(0);
    expect(payloads(harness.events(conversationId), 'files_rewound')).toHaveLength(0);

    fs.writeFileSync(path.join(workspace, 'b.txt'), 'second\n');
    await rewind(harness, [conversationId, '--to', two.runId, '--both']);
    expect(treeHash(workspace)).toBe(before);
    const three = harness.service.startTurn({ namespace: harness.ns, conversationId, prompt: 'message three', permissions, workspace });
    expect((await three.done).state).toBe('succeeded');
    expect(lastRequestText(harness)).not.toContain('message two');
  });

  it('test_a_conversation_rewind_closes_the_cli_kept_warm_for_the_chat', async () => {
    const harness = await warmHarness(['answer one', 'answer two', 'answer three'].map(answer));
    const one = await turn(harness, 'message one');
    const conversationId = one.handle.conversationId;
    const two = await turn(harness, 'message two', conversationId);
    expect(two.pid).toBe(one.pid);
    const alive = () => {
      try {
        process.kill(two.pid!, 0);
        return true;
      } catch {
        return false;
      }
    };
    expect(alive()).toBe(true);
    await harness.app.conversationRewind.rewind(harness.core.store(harness.ns), conversationId, two.handle.runId);
    await until(() => !alive(), 'the warm CLI to exit', 30_000);
    const three = await turn(harness, 'message three', conversationId);
    expect(three.pid).not.toBe(one.pid);
    expect(lastRequestText(harness)).not.toContain('message two');
  });
});
