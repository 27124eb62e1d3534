/**
 * Issue 26, the end scan with the real pinned CLI and the scripted provider: with per-call capture
 * off, the end scan starts once finished calls wait for the model's answer, and runs while the
 * model answers and the CLI exits; it is kept only if nothing changed in a folder after the scan
 * read it, until the agent's last process is gone. A file written after that scan, while the turn
 * still runs, is journaled with the turn's changes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FileChange } from '../../common/events.js';
import { sha256 } from '../../main/changes/blobs.js';
import { parsePermissionFlags } from '../../main/permissions/grants.js';
import { closeHarnessesAfterEach, payloads, startHarness } from '../app/runs/harness.js';
import { tempDir } from '../support/temp.js';

closeHarnessesAfterEach();

describe('the end scan begun before the turn ends', () => {
  it('test_a_file_written_while_the_last_answer_streams_after_the_end_scan_read_its_folder_is_journaled', async () => {
    const dir = path.join(fs.realpathSync(tempDir('ward-late-writes-')), 'workspace');
    fs.mkdirSync(path.join(dir, 'sub'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'sub', 'late.txt'), 'before\n');
    const written = path.join(dir, 'written.txt');
    const harness = await startHarness([
      { blocks: [{ type: 'tool_use', name: 'Write', input: { file_path: written, content: 'by the agent\n' } }] },
      // The last answer streams slowly: the end scan, begun when the Write's result went to the model, is long done.
      { blocks: [{ type: 'text', text: 'one two three four five six seven eight' }], deltaDelayMs: 100 },
    ]);
    fs.writeFileSync(path.join(harness.home, 'settings.json'), JSON.stringify({ perCallScanMilliseconds: 0 }));
    const permissions = parsePermissionFlags([`--allow-read=${dir}`, `--allow-write=${dir}`], dir);
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'write a file', permissions, workspace: dir });
    const lateBytes = 'changed while the answer streamed\n';
    let wrote = false;
    const unsubscribe = harness.core.store(harness.ns).journal.subscribe(handle.conversationId, handle.cursor, (event) => {
      if (event.type !== 'assistant_delta' || wrote) return;
      wrote = true;
      fs.writeFileSync(path.join(dir, 'sub', 'late.txt'), lateBytes);
    });
    try {
      expect((await handle.done).state).toBe('succeeded');
    } finally {
      unsubscribe();
    }
    expect(wrote).toBe(true);

    const changes = payloads<{ changes: FileChange[] }>(harness.events(handle.conversationId), 'files_changed').flatMap((event) => event.changes);
    expect(changes.map((change) => [change.path, change.change])).toEqual([
      ['sub/late.txt', 'modified'],
      ['written.txt', 'added'],
    ]);
    expect(changes[0]!.before).toMatchObject({ hash: sha256(Buffer.from('before\n')) });
    expect(changes[0]!.after).toMatchObject({ hash: sha256(Buffer.from(lateBytes)), size: lateBytes.length });
  });
});
