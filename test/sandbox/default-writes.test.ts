/**
 * S2 without a write grant: the conversation's workspace is read-write in the sandbox by itself
 * (a run-granted command may write there), and nothing outside it is.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsePermissionFlags } from '../../main/permissions/grants.js';
import { toolResultsSeen } from '../fixtures/model-provider/provider.js';
import { tempDir } from '../support/temp.js';
import { closeHarnessesAfterEach, payloads, startHarness, type Harness } from '../app/runs/harness.js';
import { bash, DONE } from './steps.js';

let harness: Harness | undefined;
closeHarnessesAfterEach();

describe('what a run writes with no write grant (S2)', () => {
  it('test_s2_a_run_granted_touch_writes_the_workspace_without_a_write_grant_and_nothing_beside_it', async () => {
    const root = fs.realpathSync(tempDir('ward-sandbox-'));
    const workspace = path.join(root, 'workspace');
    fs.mkdirSync(workspace);
    const inside = path.join(workspace, 'inside.txt');
    // A folder beside the workspace that exists on this machine (the sandbox's own /tmp has none).
    const beside = path.join(root, 'beside', 'escaped.txt');
    fs.mkdirSync(path.dirname(beside));
    harness = await startHarness([bash(`touch ${inside}`), bash(`touch ${beside}`), DONE]);
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'touch', permissions: parsePermissionFlags(['--allow-run=touch'], root), workspace });
    expect((await handle.done).state).toBe('succeeded');
    expect(payloads(harness.events(handle.conversationId), 'run_started')[0]).toMatchObject({ sandboxed: true });

    const [wrote, refused] = toolResultsSeen(harness.provider);
    expect(wrote!.isError).toBe(false);
    expect(fs.existsSync(inside)).toBe(true);
    expect(refused!.isError).toBe(true);
    expect(refused!.text).toMatch(/No such file or directory|Read-only file system|Permission denied/);
    expect(fs.existsSync(beside)).toBe(false);
  });
});
