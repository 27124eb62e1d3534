/**
 * S6: the empty files and folders the sandbox stands in for a workspace's missing start-up files
 * while a run lasts (test/sandbox/shell-startup-files.test.ts) do not outlive a Ward killed with
 * SIGKILL: the runtime's own clean-up runs on exit, which SIGKILL skips, and the next run would
 * take them for the person's files and keep them for good. The next Ward removes them.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CANARY_KEY, startHarness, type Harness } from '../app/runs/harness.js';
import { tempDir } from '../support/temp.js';
import { ward, WARD_BIN } from '../support/ward-cli.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const envOf = (h: Harness) => ({ HOME: h.home, WARD_HOME: h.home, TMPDIR: h.tmpRoot, DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS, ANTHROPIC_API_KEY: CANARY_KEY, WARD_MODEL_BASE_URL: h.provider.url });

async function until(condition: () => boolean, what: string, timeoutMs: number): Promise<void> {
  for (const end = Date.now() + timeoutMs; !condition(); ) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('the sandbox’s stand-ins after a killed Ward (S6)', () => {
  it('test_s6_stand_ins_a_sigkilled_ward_left_in_a_workspace_are_removed_by_the_next_run', async () => {
    harness = await startHarness([{ kind: 'hang', blocks: [{ type: 'text', text: 'Thinking' }] }, { blocks: [{ type: 'text', text: 'done' }] }]);
    const workspace = fs.realpathSync(tempDir('ward-stand-ins-ws-'));
    fs.writeFileSync(path.join(workspace, 'notes.txt'), 'mine\n');
    const killed = spawn(process.execPath, [WARD_BIN, 'run', '--json', '--workspace', workspace, '--', 'think'], { env: { PATH: process.env.PATH, ...envOf(harness) }, stdio: 'ignore' });
    const exited = new Promise((resolve) => killed.once('exit', resolve));
    // The turn reached the model: its sandbox, with the stand-ins, is up.
    await until(() => harness!.provider.conversationRequests().length === 1, 'the first turn to reach the model', 60_000);
    expect(fs.statSync(path.join(workspace, '.bashrc')).size).toBe(0);
    killed.kill('SIGKILL');
    await exited;
    // The runtime's clean-up never ran: its stand-ins are still in the person's folder.
    expect(fs.statSync(path.join(workspace, '.mcp.json')).size).toBe(0);

    const next = await ward(['run', '--json', '--workspace', workspace, '--', 'again'], { env: envOf(harness), timeoutMs: 60_000 });
    expect(next.code, next.stderr).toBe(0);
    expect(fs.readdirSync(workspace)).toEqual(['notes.txt']);
  });
});
