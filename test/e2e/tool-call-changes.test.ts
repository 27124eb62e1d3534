/**
 * Changes tied to the tool call that made them (issue 26, per-call capture) in real Chromium: the
 * call's card says how many files it changed, the turn's change line still holds all of them,
 * and the screen passes the axe gate.
 */
import { describe, expect, it } from 'vitest';
import { journalEvent, type FileChange } from '../../common/events.js';
import { RUN_STARTED } from '../support/events.js';
import { auditScreen } from './harness/axe.js';
import { seedConversation, timelineOf, useUiSuite } from './harness/harness.js';

const suite = useUiSuite();

const added = (name: string): FileChange => ({ root: '/work/project', path: name, change: 'added', before: null, after: { kind: 'file', size: 3, mode: 0o100644, hash: 'b'.repeat(64), stored: false, reason: 'test' } });

describe('a tool call’s file changes in real Chromium', () => {
  it('test_the_tool_call_card_says_how_many_files_the_call_changed', async () => {
    const harness = await suite.start();
    const conversation = seedConversation(harness, 'Per-call changes');
    const runId = '00000000-0000-4000-8000-000000000226';
    harness.core.store(harness.ns).journal.appendMany(
      conversation.id,
      [
        journalEvent('run_started', RUN_STARTED),
        journalEvent('user_prompt', { text: 'write two files' }),
        journalEvent('tool_call', { toolUseId: 'toolu_1', tool: 'Bash', arguments: { command: 'touch a b' } }),
        journalEvent('tool_result', { toolUseId: 'toolu_1', tool: 'Bash', ok: true, bytes: 0, durationMs: 12, errorCode: null, preview: '', previewTruncated: false }),
        journalEvent('files_changed', { changes: [added('a'), added('b')], files: 2, scanMs: 1, toolUseIds: ['toolu_1'] }),
        journalEvent('assistant_text', { text: 'Wrote them.' }),
        journalEvent('files_changed', { changes: [added('c')], files: 3, scanMs: 1 }),
        journalEvent('run_finished', { state: 'succeeded', reason: null }),
      ].map((event) => ({ ...event, runId })),
    );
    const page = await harness.open();
    await page.getByRole('button', { name: /Per-call changes/ }).click();
    await timelineOf(page).getByText('Wrote them.').waitFor();
    const card = timelineOf(page).getByTestId('tool-call');
    await expect(card.getByTestId('tool-changed').textContent()).resolves.toBe('changed 2 files');
    await timelineOf(page).getByText('3 files changed (3 added)').waitFor();
    await auditScreen(page, 'chat-tool-call-changes');
  });
});
