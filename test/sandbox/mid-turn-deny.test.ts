/**
 * A file deny added while a turn runs: Ward's own checks (Read, Write, Edit, the searches) honour
 * it at once, the turn's sandbox keeps the file view it started with, and the next turn's sandbox
 * hides the path from every process. `ward permissions grant` says exactly that when it stores one.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsePermissionFlags } from '../../main/permissions/grants.js';
import { toolResultsSeen, type ScriptStep } from '../fixtures/model-provider/provider.js';
import { tempDir } from '../support/temp.js';
import { wardInProcess } from '../support/ward-in-process.js';
import { closeHarnessesAfterEach, startHarness, type Harness } from '../app/runs/harness.js';
import { until } from '../support/wait.js';

let harness: Harness | undefined;
closeHarnessesAfterEach();

const DONE: ScriptStep = { blocks: [{ type: 'text', text: 'done' }] };
const catBlock = (file: string) => ({ type: 'tool_use' as const, name: 'Bash', input: { command: `cat ${file}`, description: 'read it' } });
const cat = (file: string): ScriptStep => ({ blocks: [catBlock(file)] });

describe('a file deny added while a turn runs', () => {
  it('test_a_deny_read_added_mid_turn_stops_read_at_once_reaches_bash_from_the_next_turn_and_the_confirmation_says_so', async () => {
    const workspace = path.join(fs.realpathSync(tempDir('ward-mid-deny-')), 'workspace');
    fs.mkdirSync(workspace);
    const secret = path.join(workspace, 'secret.txt');
    fs.writeFileSync(secret, 'mid-turn-canary-4b1e\n');
    // The first answer streams slowly, so the deny lands after the spawn and before the turn's tools run.
    const slowThenCat: ScriptStep = { blocks: [{ type: 'text', text: 'let me look at that file for you in a moment please' }, catBlock(secret)], deltaDelayMs: 300 };
    const readIt: ScriptStep = { blocks: [{ type: 'tool_use', name: 'Read', input: { file_path: secret } }] };
    harness = await startHarness([slowThenCat, readIt, DONE]);
    const permissions = parsePermissionFlags(['--allow-run=cat', `--allow-read=${workspace}`], workspace);
    const first = harness.service.startTurn({ namespace: harness.ns, prompt: 'look', permissions, workspace });
    await until(() => harness!.provider.conversationRequests().length === 1, 'the first model call');

    const added = await wardInProcess(['permissions', 'grant', '--conversation', first.conversationId, `--deny-read=${secret}`], { ...harness.env, WARD_HOME: harness.home });
    expect(added.code).toBe(0);
    expect(added.stdout).toContain(
      'note: Read, Write, Edit and the searches honour a file deny at once, in a turn already running too; Bash and every other process of a running turn keep the file view the turn started with, so the deny reaches them from the next turn',
    );
    expect((await first.done).state).toBe('succeeded');
    const [bashThisTurn, readThisTurn] = toolResultsSeen(harness.provider);
    // What the note says, as it happened: the running turn's Bash still sees the file, its Read does not.
    expect(bashThisTurn!.text).toContain('mid-turn-canary-4b1e');
    expect(readThisTurn).toMatchObject({ isError: true });
    expect(readThisTurn!.text).not.toContain('mid-turn-canary-4b1e');
    expect(readThisTurn!.text).toContain(`denied by deny read ${secret}`);

    // The next turn's sandbox is built with the deny: Bash gets nothing.
    harness.provider.push(cat(secret), DONE);
    const second = harness.service.startTurn({ namespace: harness.ns, conversationId: first.conversationId, prompt: 'again', permissions, workspace });
    expect((await second.done).state).toBe('succeeded');
    const bashNextTurn = toolResultsSeen(harness.provider).at(-1)!;
    expect(bashNextTurn.text).not.toContain('mid-turn-canary-4b1e');
    expect(bashNextTurn.text).toMatch(/No such file or directory|Permission denied/);
  });
});
