/**
 * main/changes/watch.ts on real files and real inotify: the end scan made while the CLI exits is
 * kept only when nothing changed in a folder after the scan read it; the sandbox's own stand-ins
 * going away are not a change; a folder that cannot be watched means the scan is not kept.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BlobStore } from '../../main/changes/blobs.js';
import { scanRootSliced } from '../../main/changes/scan.js';
import { TreeWatch } from '../../main/changes/watch.js';
import { tempDir } from '../support/temp.js';

function tree(): { root: string; barriers: string } {
  const base = tempDir('ward-watch-');
  const root = path.join(base, 'root');
  fs.mkdirSync(path.join(root, 'sub', 'deeper'), { recursive: true });
  fs.writeFileSync(path.join(root, 'a.txt'), 'a\n');
  fs.writeFileSync(path.join(root, 'sub', 'deeper', 'b.txt'), 'b\n');
  return { root, barriers: path.join(base, 'barriers') };
}

/** A real scan of `root` with `watch` hearing of every folder before its read. */
async function watchedScan(root: string, watch: TreeWatch): Promise<void> {
  const blobs = new BlobStore(path.join(path.dirname(root), 'blobs'));
  await scanRootSliced(root, {}, { blobs, limits: { maxFiles: 1000, maxFileBytes: 1024, deadline: Number.MAX_SAFE_INTEGER }, denyRead: [], watch: (folder) => watch.watch(folder) });
  blobs.flush();
}

describe('the end scan’s watch', () => {
  it('test_a_scan_nothing_changed_after_is_kept_and_a_write_after_it_in_any_folder_drops_it', async () => {
    const { root, barriers } = tree();
    const quiet = new TreeWatch(barriers, new Set());
    await watchedScan(root, quiet);
    expect(await quiet.settled()).toBe(true);

    for (const write of [() => fs.writeFileSync(path.join(root, 'sub', 'deeper', 'b.txt'), 'late\n'), () => fs.writeFileSync(path.join(root, 'new.txt'), ''), () => fs.chmodSync(path.join(root, 'a.txt'), 0o755), () => fs.rmSync(path.join(root, 'sub', 'deeper'), { recursive: true })]) {
      const watch = new TreeWatch(barriers, new Set());
      await watchedScan(root, watch);
      write();
      expect(await watch.settled()).toBe(false);
    }
    // The watch's own closing file is gone.
    expect(fs.readdirSync(barriers)).toEqual([]);
  });

  it('test_the_sandbox_removing_its_stand_ins_is_no_change_but_a_folder_gone_before_its_watch_is_heard_by_its_parent', async () => {
    const { root, barriers } = tree();
    const standIns = [path.join(root, '.bashrc'), path.join(root, '.claude')];
    fs.writeFileSync(standIns[0]!, '');
    fs.mkdirSync(standIns[1]!);
    const watch = new TreeWatch(barriers, new Set(standIns));
    await watchedScan(root, watch);
    fs.rmSync(standIns[0]!);
    fs.rmdirSync(standIns[1]!);
    expect(await watch.settled()).toBe(true);

    // Listed by its parent, then removed before the scan reached it: the parent heard of it.
    const racing = new TreeWatch(barriers, new Set());
    racing.watch(root);
    fs.rmSync(path.join(root, 'sub'), { recursive: true });
    racing.watch(path.join(root, 'sub'));
    expect(await racing.settled()).toBe(false);
  });

  it('test_a_change_whose_event_an_inotify_queue_filled_by_another_watch_dropped_is_not_taken_for_quiet', async () => {
    const { root, barriers } = tree();
    // Another run's tree in this process (its watches share the one inotify queue) fills the kernel's queue, no
    // event read meanwhile (two files in turn, so no event merges with the last); then this run's agent writes, and
    // the full queue drops that event (libuv drops the overflow notice too).
    const other = tree();
    const busy = new TreeWatch(other.barriers, new Set());
    await watchedScan(other.root, busy);
    const watch = new TreeWatch(barriers, new Set());
    await watchedScan(root, watch);
    const queue = Number(fs.readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8'));
    for (let index = 0; index < queue; index += 1) fs.writeFileSync(path.join(other.root, index % 2 === 0 ? 'a.txt' : 'sub/c.txt'), `${index}`);
    fs.writeFileSync(path.join(root, 'sub', 'deeper', 'b.txt'), 'the change whose event was dropped\n');
    // The event loop reads the queue (what it holds) before the turn ends; the barrier's own event then arrives.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await watch.settled()).toBe(false);
    busy.close();
  });

  it('test_a_root_that_cannot_be_watched_is_not_known_to_stay_the_same', async () => {
    const { root, barriers } = tree();
    const watch = new TreeWatch(barriers, new Set());
    watch.watch(path.join(root, 'not-made-yet'));
    expect(await watch.settled()).toBe(false);
  });
});
