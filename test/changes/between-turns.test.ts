/**
 * Issue 26, a conversation's turns in one process, with the real pinned CLI, its sandbox and the
 * scripted provider: the second turn's scans read only the folders the watch kept since the first
 * heard of, and what a person changed between the turns (a new file in a folder, an edit, a
 * removal) is in neither turn's changes, while each turn's own Bash write is in its own; a later
 * turn that edits what the person left changes it from the person's bytes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FileChange } from '../../common/events.js';
import { parsePermissionFlags } from '../../main/permissions/grants.js';
import { closeHarnessesAfterEach, payloads, startHarness } from '../app/runs/harness.js';
import { bash, DONE } from '../sandbox/steps.js';
import { tempDir } from '../support/temp.js';

closeHarnessesAfterEach();

describe('changes across a conversation’s turns in one process', () => {
  it('test_a_persons_changes_between_two_turns_are_in_neither_turn_and_each_turns_own_write_is_in_its_own', async () => {
    const dir = path.join(fs.realpathSync(tempDir('ward-between-turns-')), 'workspace');
    fs.mkdirSync(path.join(dir, 'sub', 'deeper'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'a.txt'), 'the agent edits this\n');
    fs.writeFileSync(path.join(dir, 'b.txt'), 'before\n');
    fs.writeFileSync(path.join(dir, 'sub', 's.txt'), 'the agent edits this later\n');
    fs.writeFileSync(path.join(dir, 'sub', 'deeper', 'gone.txt'), 'the person removes this\n');
    const harness = await startHarness([bash(`sed -i s/agent/first/ ${path.join(dir, 'a.txt')}`), DONE, bash(`sed -i s/agent/second/ ${path.join(dir, 'sub', 's.txt')}`), DONE, bash(`sed -i s/person/third/ ${path.join(dir, 'b.txt')} ${path.join(dir, 'sub', 'deeper', 'person.txt')}`), DONE]);
    const permissions = parsePermissionFlags([`--allow-read=${dir}`, `--allow-write=${dir}`, '--allow-run=sed'], dir);
    const first = harness.service.startTurn({ namespace: harness.ns, prompt: 'one', permissions, workspace: dir });
    expect((await first.done).state).toBe('succeeded');

    fs.writeFileSync(path.join(dir, 'sub', 'deeper', 'person.txt'), 'the person\n');
    fs.writeFileSync(path.join(dir, 'b.txt'), 'edited by the person\n');
    fs.rmSync(path.join(dir, 'sub', 'deeper', 'gone.txt'));
    const second = harness.service.startTurn({ namespace: harness.ns, prompt: 'two', permissions, conversationId: first.conversationId });
    expect((await second.done).state).toBe('succeeded');

    // The third turn edits what the person left: modified from the person's bytes, not added, nothing else.
    const third = harness.service.startTurn({ namespace: harness.ns, prompt: 'three', permissions, conversationId: first.conversationId });
    expect((await third.done).state).toBe('succeeded');

    const changed = payloads<{ changes: FileChange[] }>(harness.events(first.conversationId), 'files_changed');
    expect(changed.map(({ changes }) => changes.map((change) => `${change.change} ${change.path}`).sort())).toEqual([['modified a.txt'], ['modified sub/s.txt'], ['modified b.txt', 'modified sub/deeper/person.txt']]);
    expect(payloads(harness.events(first.conversationId), 'files_untracked')).toEqual([]);
  });
});
