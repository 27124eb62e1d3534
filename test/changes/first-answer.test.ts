/**
 * Issue 26 with the real pinned CLI and the scripted provider: the index before a turn is taken
 * while the CLI starts, and the turn's first model call waits for it, so a tool call in the first
 * answer is diffed against the state before the turn even when that index is slow (a tree large
 * enough that its first snapshot outlasts the CLI's start-up): the file the scan reaches last,
 * edited by Bash's `sed -i` in the first answer, shows as modified from its old bytes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FileChange } from '../../common/events.js';
import { BlobStore, sha256 } from '../../main/changes/blobs.js';
import { scanRoot } from '../../main/changes/scan.js';
import { parsePermissionFlags } from '../../main/permissions/grants.js';
import { closeHarnessesAfterEach, payloads, startHarness } from '../app/runs/harness.js';
import { bash, DONE } from '../sandbox/steps.js';
import { tempDir } from '../support/temp.js';

closeHarnessesAfterEach();

const FOLDERS = 200;
const FILES = 40_000;

describe('the index before a turn', () => {
  it('test_a_sed_in_the_first_answer_on_the_file_a_slow_first_snapshot_reaches_last_is_modified_from_its_old_bytes', async () => {
    const base = fs.realpathSync(tempDir('ward-first-answer-'));
    const dir = path.join(base, 'workspace');
    for (let index = 0; index < FILES; index += 1) {
      const folder = path.join(dir, `d${index % FOLDERS}`);
      if (index < FOLDERS) fs.mkdirSync(folder, { recursive: true });
      fs.writeFileSync(path.join(folder, `f${index}.txt`), `file ${index}\n`);
    }
    // The order a scan visits the tree in is its index's key order: the last key is read last.
    const order = Object.keys(scanRoot(dir, {}, { blobs: new BlobStore(path.join(base, 'blobs')), limits: { maxFiles: FILES + 1, maxFileBytes: 1024, deadline: Number.MAX_SAFE_INTEGER }, denyRead: [] }));
    const last = order.at(-1)!;
    const oldBytes = fs.readFileSync(path.join(dir, last));
    const harness = await startHarness([bash(`sed -i s/file/edited/ ${path.join(dir, last)}`), DONE], {
      // A loaded machine must not turn the test into an untracked run.
      changeLimits: { budgetMs: 300_000 },
    });
    const permissions = parsePermissionFlags([`--allow-read=${dir}`, `--allow-write=${dir}`, '--allow-run=sed'], dir);
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'overwrite it', permissions, workspace: dir });
    expect((await handle.done).state).toBe('succeeded');

    const changes = payloads<{ changes: FileChange[] }>(harness.events(handle.conversationId), 'files_changed').flatMap((event) => event.changes);
    expect(changes.map((change) => [change.path, change.change])).toEqual([[last, 'modified']]);
    expect(changes[0]!.before).toMatchObject({ hash: sha256(oldBytes), size: oldBytes.length });
    expect(changes[0]!.after).toMatchObject({ hash: sha256(Buffer.from(oldBytes.toString('utf8').replace('file', 'edited'))) });
  }, 240_000);
});
