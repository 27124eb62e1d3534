/**
 * A read grant of a folder that holds the workspace (`--allow-read=~/code` for a run in
 * ~/code/project) leaves the workspace writable: the runtime binds read grants back over the
 * read-denied root after the write paths inside them, which made the workspace read-only (and
 * bubblewrap then could not make the built-in denies' mount points there: the run failed).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsePermissionFlags } from '../../main/permissions/grants.js';
import { toolResultsSeen } from '../fixtures/model-provider/provider.js';
import { tempDir } from '../support/temp.js';
import { closeHarnessesAfterEach, startHarness, type Harness } from '../app/runs/harness.js';

let harness: Harness | undefined;
closeHarnessesAfterEach();

describe('a read grant over the workspace', () => {
  it('test_a_workspace_inside_a_folder_granted_for_reading_stays_writable_by_every_process_of_the_run', async () => {
    const code = path.join(fs.realpathSync(tempDir('ward-read-over-')), 'code');
    const workspace = path.join(code, 'project');
    fs.mkdirSync(workspace, { recursive: true });
    fs.writeFileSync(path.join(code, 'notes.txt'), 'readable beside the workspace\n');
    const made = path.join(workspace, 'made.txt');
    harness = await startHarness([
      { blocks: [{ type: 'tool_use', name: 'Bash', input: { command: `cp ${path.join(code, 'notes.txt')} ${made}`, description: 'copy the notes in' } }] },
      { blocks: [{ type: 'text', text: 'done' }] },
    ]);
    const permissions = parsePermissionFlags(['--allow-run=cp', `--allow-read=${code}`], workspace);
    const turn = harness.service.startTurn({ namespace: harness.ns, prompt: 'write a file', permissions, workspace });
    expect((await turn.done).state).toBe('succeeded');
    expect(toolResultsSeen(harness.provider)[0]).toMatchObject({ isError: false });
    expect(fs.readFileSync(made, 'utf8')).toBe('readable beside the workspace\n');
  });
});
