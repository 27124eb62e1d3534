/**
 * Issue 26 retention with real parts (the pinned CLI, the scripted provider, real files): a
 * namespace's file-change store over its cap (settings.json `changeStoreMaxMegabytes`) drops,
 * after the turn, the bytes only an index needs, and keeps every blob the journal names.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FileChange } from '../../common/events.js';
import { BlobStore, sha256 } from '../../main/changes/blobs.js';
import { namespaceDir } from '../../main/namespaces/namespace.js';
import { parsePermissionFlags } from '../../main/permissions/grants.js';
import { closeHarnessesAfterEach, payloads, startHarness } from '../app/runs/harness.js';
import { bash, DONE } from '../sandbox/steps.js';
import { tempDir } from '../support/temp.js';
import { wardInProcess } from '../support/ward-in-process.js';

closeHarnessesAfterEach();

describe('the file-change store over its cap', () => {
  it('test_a_store_over_its_cap_keeps_the_journals_blobs_and_drops_the_bytes_only_an_index_needs', async () => {
    const dir = path.join(fs.realpathSync(tempDir('ward-changes-retention-')), 'workspace');
    fs.mkdirSync(dir);
    // Unchanged by the turn: its bytes are kept only as a `before` to come, the first to go over the cap.
    const big = randomBytes(3 * 1024 * 1024);
    fs.writeFileSync(path.join(dir, 'big.bin'), big);
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'before\n');
    fs.writeFileSync(path.join(dir, 'edit.sh'), 'echo after > "$(dirname "$0")/notes.txt"\n');
    const harness = await startHarness([bash(`sh ${dir}/edit.sh`), DONE]);
    fs.writeFileSync(path.join(harness.home, 'settings.json'), JSON.stringify({ changeStoreMaxMegabytes: 1 }));
    const permissions = parsePermissionFlags([`--allow-write=${dir}`, '--allow-run=sh'], dir);
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'edit the notes', permissions, workspace: dir });
    expect((await handle.done).state).toBe('succeeded');

    const changes = payloads<{ changes: FileChange[] }>(harness.events(handle.conversationId), 'files_changed').flatMap((event) => event.changes);
    expect(changes).toMatchObject([{ path: 'notes.txt', change: 'modified' }]);
    const blobs = new BlobStore(path.join(namespaceDir(harness.home, harness.ns), 'changes', 'blobs'));
    expect(blobs.has(sha256(big))).toBe(false);
    expect(blobs.read(changes[0]!.before!.hash!).toString()).toBe('before\n');
    expect(blobs.read(changes[0]!.after!.hash!).toString()).toBe('after\n');
    expect(blobs.size().bytes).toBeLessThanOrEqual(1024 * 1024);
    const shown = await wardInProcess(['changes', handle.conversationId, '--diff'], { ...harness.env, WARD_HOME: harness.home });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('-before');
    expect(shown.stdout).toContain('+after');
  });
});
