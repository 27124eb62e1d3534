/**
 * Issue 26 with the real pinned CLI and the scripted provider: every change a turn makes to its
 * workspace (Write, Edit, Bash's sed -i, rm, mv, chmod, a script writing 1,000 files) is journaled
 * as files_changed; `ward changes --diff` shows it; `ward rewind --files` restores the tree byte
 * for byte, refuses on a conflict, and is undone by rewinding to it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FileChange } from '../../common/events.js';
import { parsePermissionFlags } from '../../main/permissions/grants.js';
import type { ScriptStep } from '../fixtures/model-provider/provider.js';
import { closeHarnessesAfterEach, payloads, startHarness, type Harness } from '../app/runs/harness.js';
import { tempDir } from '../support/temp.js';
import { wardInProcess } from '../support/ward-in-process.js';
import { bash, DONE } from '../sandbox/steps.js';
import { treeHash } from './tree.js';

closeHarnessesAfterEach();

const tool = (name: string, input: Record<string, unknown>): ScriptStep => ({ blocks: [{ type: 'tool_use', name, input }] });

function workspaceWithFiles(): string {
  const workspace = path.join(fs.realpathSync(tempDir('ward-changes-')), 'workspace');
  fs.mkdirSync(workspace);
  fs.writeFileSync(path.join(workspace, 'a.txt'), 'alpha\nbeta\n');
  fs.writeFileSync(path.join(workspace, 'b.txt'), 'x marks the spot\n');
  fs.writeFileSync(path.join(workspace, 'c.sh'), 'echo hi\n', { mode: 0o644 });
  fs.writeFileSync(path.join(workspace, 'd.txt'), 'to be removed\n');
  fs.writeFileSync(path.join(workspace, 'e.txt'), 'to be moved\n');
  fs.writeFileSync(path.join(workspace, 'gen.sh'), 'mkdir many\nfor i in $(seq 1 1000); do echo "file $i" > many/$i.txt; done\n');
  return workspace;
}

function agentSteps(workspace: string): ScriptStep[] {
  return [
    tool('Write', { file_path: path.join(workspace, 'new.txt'), content: 'brand new\n' }),
    tool('Read', { file_path: path.join(workspace, 'a.txt') }),
    tool('Edit', { file_path: path.join(workspace, 'a.txt'), old_string: 'beta', new_string: 'gamma' }),
    bash(`sed -i s/x/y/ ${path.join(workspace, 'b.txt')}`),
    bash(`rm ${path.join(workspace, 'd.txt')}`),
    bash(`mv ${path.join(workspace, 'e.txt')} ${path.join(workspace, 'moved.txt')}`),
    bash(`chmod 755 ${path.join(workspace, 'c.sh')}`),
    bash(`sh ${path.join(workspace, 'gen.sh')}`),
    DONE,
  ];
}

const PERMISSIONS = (workspace: string) => parsePermissionFlags([`--allow-read=${workspace}`, `--allow-write=${workspace}`, '--allow-run=sed,rm,mv,chmod,sh'], workspace);

async function changedTurn(harness: Harness, workspace: string): Promise<{ conversationId: string; runId: string }> {
  const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'change things', permissions: PERMISSIONS(workspace), workspace });
  expect((await handle.done).state).toBe('succeeded');
  return { conversationId: handle.conversationId, runId: handle.runId };
}

const wardEnv = (harness: Harness) => ({ ...harness.env, WARD_HOME: harness.home });
const byPath = (changes: FileChange[]) => new Map(changes.map((change) => [change.path, change]));

describe('a turn’s file changes', () => {
  it('test_write_edit_and_bash_changes_are_journaled_shown_as_a_diff_and_rewound_byte_exact_and_undone', async () => {
    const workspace = workspaceWithFiles();
    const harness = await startHarness(agentSteps(workspace));
    const before = treeHash(workspace);
    const { conversationId, runId } = await changedTurn(harness, workspace);
    const after = treeHash(workspace);

    const changes = payloads<{ changes: FileChange[] }>(harness.events(conversationId), 'files_changed').flatMap((event) => event.changes);
    const seen = byPath(changes);
    expect(seen.get('new.txt')).toMatchObject({ change: 'added', before: null, after: { kind: 'file', size: 10, stored: true } });
    expect(seen.get('a.txt')).toMatchObject({ change: 'modified' });
    expect(seen.get('b.txt')).toMatchObject({ change: 'modified' });
    expect(seen.get('d.txt')).toMatchObject({ change: 'deleted', after: null });
    expect(seen.get('moved.txt')).toMatchObject({ change: 'renamed', from: 'e.txt' });
    expect(seen.has('e.txt')).toBe(false);
    expect((seen.get('c.sh')!.before!.mode & 0o777).toString(8)).toBe('644');
    expect((seen.get('c.sh')!.after!.mode & 0o777).toString(8)).toBe('755');
    expect(changes.filter((change) => change.path.startsWith('many/') && change.change === 'added')).toHaveLength(1000);
    expect(changes).toHaveLength(1006);

    const shown = await wardInProcess(['changes', conversationId, '--diff'], wardEnv(harness));
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('1006 files changed (1001 added, 3 modified, 1 deleted, 1 renamed)');
    expect(shown.stdout).toContain('-beta\n+gamma');
    expect(shown.stdout).toContain('-x marks the spot\n+y marks the spot');
    expect(shown.stdout).toContain('(mode 644 -> 755)');

    const rewound = await wardInProcess(['rewind', conversationId, '--to', runId], wardEnv(harness));
    expect(rewound.stderr).toBe('');
    expect(rewound.code).toBe(0);
    expect(treeHash(workspace)).toBe(before);
    const rewindSeq = Number(/event #(\d+); undo/.exec(rewound.stdout)![1]);

    const undone = await wardInProcess(['rewind', conversationId, '--to', String(rewindSeq)], wardEnv(harness));
    expect(undone.code).toBe(0);
    expect(treeHash(workspace)).toBe(after);
    expect(payloads(harness.events(conversationId), 'files_rewound')).toHaveLength(2);
  });

  it('test_a_rewind_over_a_file_changed_since_lists_the_conflict_and_changes_nothing_unless_forced', async () => {
    const workspace = workspaceWithFiles();
    const harness = await startHarness(agentSteps(workspace));
    const before = treeHash(workspace);
    const { conversationId, runId } = await changedTurn(harness, workspace);
    fs.writeFileSync(path.join(workspace, 'a.txt'), 'edited by a person since\n');
    const edited = treeHash(workspace);

    const refused = await wardInProcess(['rewind', conversationId, '--to', runId], wardEnv(harness));
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('nothing was changed: 1 file is not in the state the journal records');
    expect(refused.stderr).toContain(path.join(workspace, 'a.txt'));
    expect(treeHash(workspace)).toBe(edited);
    expect(payloads(harness.events(conversationId), 'files_rewound')).toHaveLength(0);

    const forced = await wardInProcess(['rewind', conversationId, '--to', runId, '--force'], wardEnv(harness));
    expect(forced.code).toBe(0);
    expect(treeHash(workspace)).toBe(before);
    expect(payloads<{ forced: string[] }>(harness.events(conversationId), 'files_rewound')[0]!.forced).toEqual([path.join(workspace, 'a.txt')]);
  });

  it('test_a_scan_past_its_file_limit_journals_changes_not_tracked_and_the_run_goes_on', async () => {
    const workspace = workspaceWithFiles();
    const harness = await startHarness([DONE], { changeLimits: { maxFiles: 3 } });
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'hi', permissions: PERMISSIONS(workspace), workspace });
    expect((await handle.done).state).toBe('succeeded');
    expect(payloads(harness.events(handle.conversationId), 'files_untracked')).toEqual([{ reason: `${workspace} holds more than 3 files` }]);
  });
});
