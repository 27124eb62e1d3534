/**
 * Issue 26, per-call capture, with the real pinned CLI and the scripted provider: a turn's changes
 * are tied to the tool call that made them (Write, then Bash's `sed -i`, then Bash's `rm`: three
 * files_changed events, each naming its own tool_use id), `ward replay`, the Markdown and the HTML
 * exports say which call changed what, and a rewind of the turn still restores the tree byte for byte.
 * With per-call capture off (settings.json), the turn's changes are one event and the journal says why.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FileChange } from '../../common/events.js';
import { ChangeStore } from '../../main/changes/tracker.js';
import { namespaceDir } from '../../main/namespaces/namespace.js';
import { parsePermissionFlags } from '../../main/permissions/grants.js';
import { closeHarnessesAfterEach, payloads, startHarness, type Harness } from '../app/runs/harness.js';
import { bash, DONE } from '../sandbox/steps.js';
import { tempDir } from '../support/temp.js';
import { wardInProcess } from '../support/ward-in-process.js';
import { treeHash } from './tree.js';

closeHarnessesAfterEach();

interface Changed {
  readonly changes: FileChange[];
  readonly toolUseIds?: string[];
}

function workspace(): string {
  const dir = path.join(fs.realpathSync(tempDir('ward-per-call-')), 'workspace');
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'b.txt'), 'x marks the spot\n');
  fs.writeFileSync(path.join(dir, 'd.txt'), 'to be removed\n');
  return dir;
}

async function threeCalls(perCallScanMilliseconds: number): Promise<{ harness: Harness; dir: string; before: string; conversationId: string; runId: string }> {
  const dir = workspace();
  const harness = await startHarness([
    { blocks: [{ type: 'tool_use', name: 'Write', input: { file_path: path.join(dir, 'new.txt'), content: 'brand new\n' } }] },
    bash(`sed -i s/x/y/ ${path.join(dir, 'b.txt')}`),
    bash(`rm ${path.join(dir, 'd.txt')}`),
    DONE,
  ]);
  // A generous bound: the test is about attribution, not about this machine's load.
  fs.writeFileSync(path.join(harness.home, 'settings.json'), JSON.stringify({ perCallScanMilliseconds }));
  const before = treeHash(dir);
  const permissions = parsePermissionFlags([`--allow-read=${dir}`, `--allow-write=${dir}`, '--allow-run=sed,rm'], dir);
  const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'change three things', permissions, workspace: dir });
  expect((await handle.done).state).toBe('succeeded');
  return { harness, dir, before, conversationId: handle.conversationId, runId: handle.runId };
}

const wardEnv = (harness: Harness) => ({ ...harness.env, WARD_HOME: harness.home });

describe('changes tied to the tool call that made them', () => {
  it('test_write_then_sed_then_rm_are_three_attributions_each_to_its_own_tool_use_id', async () => {
    const { harness, dir, before, conversationId, runId } = await threeCalls(5_000);
    const events = harness.events(conversationId);
    const calls = payloads<{ toolUseId: string; tool: string }>(events, 'tool_call');
    expect(calls.map((call) => call.tool)).toEqual(['Write', 'Bash', 'Bash']);

    const changed = payloads<Changed>(events, 'files_changed');
    expect(changed.map((event) => event.toolUseIds)).toEqual(calls.map((call) => [call.toolUseId]));
    expect(changed.map((event) => event.changes.map((change) => [change.path, change.change]))).toEqual([[['new.txt', 'added']], [['b.txt', 'modified']], [['d.txt', 'deleted']]]);
    expect(payloads(events, 'files_per_call_off')).toHaveLength(0);

    // Each attribution is journaled before the model hears of the call's result: before the next call.
    const seqOf = (type: string, index: number) => events.filter((event) => event.type === type)[index]!.seq;
    expect(seqOf('files_changed', 0)).toBeLessThan(seqOf('tool_call', 1));
    expect(seqOf('files_changed', 1)).toBeLessThan(seqOf('tool_call', 2));

    const replay = await wardInProcess(['replay', conversationId], wardEnv(harness));
    expect(replay.stdout).toContain(`1 file changed (1 added) by tool call ${calls[0]!.toolUseId}`);
    expect(replay.stdout).toContain(`1 file changed (1 deleted) by tool call ${calls[2]!.toolUseId}`);
    const markdown = path.join(tempDir('ward-per-call-md-'), 'chat.md');
    expect((await wardInProcess(['export', conversationId, '--format', 'markdown', '--out', markdown], wardEnv(harness))).code).toBe(0);
    expect(fs.readFileSync(markdown, 'utf8')).toContain(`1 file changed (1 modified) by tool call Bash (${calls[1]!.toolUseId})`);
    const html = path.join(tempDir('ward-per-call-html-'), 'chat.html');
    expect((await wardInProcess(['export', conversationId, '--format', 'html', '--out', html], wardEnv(harness))).code).toBe(0);
    expect(fs.readFileSync(html, 'utf8')).toContain(`1 file changed (1 added) by tool call Write (${calls[0]!.toolUseId})`);

    // The index kept for the next turn is the tree after the last call (the per-call scans leave keeping it to the end scan).
    const kept = new ChangeStore(path.join(namespaceDir(harness.home, harness.ns), 'changes')).readIndex(conversationId, dir);
    expect(Object.keys(kept).sort()).toEqual(['b.txt', 'new.txt']);
    expect(kept['b.txt']!.size).toBe('y marks the spot\n'.length);

    // The turn's per-call events together are its change: a rewind of the run restores the tree.
    const shown = await wardInProcess(['changes', conversationId, '--run', runId], wardEnv(harness));
    expect(shown.stdout).toContain('3 files changed (1 added, 1 modified, 1 deleted)');
    const rewound = await wardInProcess(['rewind', conversationId, '--to', runId], wardEnv(harness));
    expect(rewound.stderr).toBe('');
    expect(treeHash(dir)).toBe(before);
  });

  it('test_ward_changes_lists_a_file_two_calls_changed_once_with_its_net_change_and_both_calls_json_keeps_each_event', async () => {
    const dir = workspace();
    const notes = path.join(dir, 'notes.txt');
    const harness = await startHarness([
      { blocks: [{ type: 'tool_use', name: 'Write', input: { file_path: notes, content: 'one\n' } }] },
      bash(`sed -i s/one/two/ ${notes}`),
      bash(`sed -i s/x/y/ ${path.join(dir, 'b.txt')}`),
      bash(`sed -i s/y/z/ ${path.join(dir, 'b.txt')}`),
      DONE,
    ]);
    fs.writeFileSync(path.join(harness.home, 'settings.json'), JSON.stringify({ perCallScanMilliseconds: 5_000 }));
    const permissions = parsePermissionFlags([`--allow-read=${dir}`, `--allow-write=${dir}`, '--allow-run=sed'], dir);
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'write notes, then fix them', permissions, workspace: dir });
    expect((await handle.done).state).toBe('succeeded');
    const calls = payloads<{ toolUseId: string; tool: string }>(harness.events(handle.conversationId), 'tool_call');
    expect(calls.map((call) => call.tool)).toEqual(['Write', 'Bash', 'Bash', 'Bash']);
    const [write, fix, first, second] = calls.map((call) => call.toolUseId);

    // One line per file: notes.txt was added (its net change), by the two calls that touched it.
    const shown = await wardInProcess(['changes', handle.conversationId], wardEnv(harness));
    expect(shown.code).toBe(0);
    const lines = shown.stdout.trimEnd().split('\n');
    expect(lines.slice(1)).toEqual([`  A ${notes} by tool calls Write (${write}), Bash (${fix})`, `  M ${path.join(dir, 'b.txt')} by tool calls Bash (${first}), Bash (${second})`]);
    expect(lines[0]).toMatch(/^#\d+ run \S+: 2 files changed \(1 added, 1 modified\)$/);

    // --json: the same net changes, and each event as journaled.
    const json = await wardInProcess(['changes', handle.conversationId, '--json'], wardEnv(harness));
    const [entry] = json.stdout.trim().split('\n').map((line) => JSON.parse(line) as { changes: { path: string; change: string; toolUseIds: string[] }[]; parts: { toolUseIds: string[] | null; changes: unknown[] }[] });
    expect(entry!.changes.map((change) => [change.path, change.change, change.toolUseIds])).toEqual([
      ['notes.txt', 'added', [write, fix]],
      ['b.txt', 'modified', [first, second]],
    ]);
    expect(entry!.parts.map((part) => part.toolUseIds)).toEqual([[write], [fix], [first], [second]]);
  });

  it('test_with_per_call_capture_off_the_turn_has_one_event_and_the_journal_says_why', async () => {
    const { harness, conversationId } = await threeCalls(0);
    const events = harness.events(conversationId);
    const changed = payloads<Changed>(events, 'files_changed');
    expect(changed).toHaveLength(1);
    expect(changed[0]!.toolUseIds).toBeUndefined();
    expect(changed[0]!.changes.map((change) => change.path)).toEqual(['b.txt', 'd.txt', 'new.txt']);
    expect(payloads<{ reason: string }>(events, 'files_per_call_off')).toEqual([{ reason: 'turned off (perCallScanMilliseconds is 0 in settings.json)' }]);
    const replay = await wardInProcess(['replay', conversationId], wardEnv(harness));
    expect(replay.stdout).toContain('changes in this run are not tied to each tool call: turned off');
  });
});
