/** Issue 26: a run's changes journaled in parts are one change per file, its state before the first part against after the last. */
import { describe, expect, it } from 'vitest';
import type { FileChange, FileState } from '../../common/events.js';
import { netChanges } from '../../common/file-changes.js';

const state = (hash: string, mode = 0o100644): FileState => ({ kind: 'file', size: 3, mode, hash, stored: true });
const change = (kind: FileChange['change'], path: string, before: FileState | null, after: FileState | null, from?: string): FileChange => ({
  root: '/w',
  path,
  change: kind,
  ...(from === undefined ? {} : { from }),
  before,
  after,
});

describe('net changes of a run', () => {
  it('test_each_file_once_with_its_net_change_and_the_calls_that_touched_it_renames_followed_round_trips_dropped', () => {
    const net = netChanges([
      { changes: [change('added', 'a', null, state('1')), change('modified', 'b', state('2'), state('3')), change('added', 'tmp', null, state('4'))], toolUseIds: ['t1'] },
      { changes: [change('modified', 'a', state('1'), state('5')), change('renamed', 'c', state('3'), state('3'), 'b'), change('deleted', 'tmp', state('4'), null)], toolUseIds: ['t2'] },
      { changes: [change('modified', 'd', state('6'), state('7')), change('modified', 'e', state('8'), state('8', 0o100755))] },
      { changes: [change('modified', 'd', state('7'), state('6'))], toolUseIds: ['t3'] },
    ]);
    expect(net.map(({ change: one, toolUseIds }) => [one.change, one.from ?? null, one.path, one.before?.hash ?? null, one.after?.hash ?? null, toolUseIds])).toEqual([
      ['added', null, 'a', null, '5', ['t1', 't2']],
      ['renamed', 'b', 'c', '2', '3', ['t1', 't2']],
      ['modified', null, 'e', '8', '8', []],
    ]);
    // One part alone is unchanged, even a change of time only (same hash and mode).
    expect(netChanges([{ changes: [change('modified', 'f', state('9'), state('9'))] }]).map((one) => one.change.path)).toEqual(['f']);
  });
});
