/**
 * A re-scan of a tree of some size is listed by the scan workers (main/changes/stat-workers.ts)
 * and compared on the main thread: it must give exactly the index the main thread's own walk
 * gives, deny-read included (a denied file's bytes never reach the blob store), and a worker
 * that fails or hangs must leave the turn a whole index or a clear "untracked", never nothing.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BlobStore } from '../../main/changes/blobs.js';
import { scanRoot, scanRootSliced, Untracked, type ScanOptions } from '../../main/changes/scan.js';
import { StatWorkers, type FolderLister, type Listing, type ListRequest } from '../../main/changes/stat-workers.js';
import { tempDir } from '../support/temp.js';
import { filesHolding } from './tree.js';

const CANARY = 'ward-canary-scan-workers-7f3a';

/** 1,200 files in nested folders, a denied folder and a denied file beside readable ones, a link out, .git, an empty folder. */
function setUp(): { root: string; blobsDir: string; options: ScanOptions } {
  const base = tempDir('ward-scan-workers-');
  const root = path.join(base, 'root');
  for (let index = 0; index < 1_200; index += 1) {
    const dir = path.join(root, `d${index % 12}`, `e${index % 5}`);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `f${index}.txt`), `file ${index}\n`);
  }
  fs.mkdirSync(path.join(root, 'secrets'));
  fs.writeFileSync(path.join(root, 'secrets', 'key.pem'), 'old secret');
  fs.writeFileSync(path.join(root, 'd1', '.env'), 'OLD=1');
  fs.writeFileSync(path.join(root, 'd1', 'readme.md'), 'readable');
  fs.symlinkSync('/etc/passwd', path.join(root, 'passwd-link'));
  fs.mkdirSync(path.join(root, 'empty'));
  fs.mkdirSync(path.join(root, '.git', 'refs', 'heads'), { recursive: true });
  fs.mkdirSync(path.join(root, '.git', 'refs', 'tags'));
  fs.writeFileSync(path.join(root, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  fs.writeFileSync(path.join(root, '.git', 'refs', 'heads', 'main'), '0123\n');
  const blobsDir = path.join(base, 'blobs');
  const denyRead = [path.join(root, 'secrets'), path.join(root, 'd1', '.env')];
  return { root, blobsDir, options: { blobs: new BlobStore(blobsDir), limits: { maxFiles: 10_000, maxFileBytes: 1024, deadline: Number.MAX_SAFE_INTEGER }, denyRead } };
}

/** What an agent's turn does: edits, a removal, a mode change, a new folder, a rename, and the canary into both denied files. */
function change(root: string): void {
  fs.writeFileSync(path.join(root, 'd3', 'e3', 'f123.txt'), 'edited');
  fs.rmSync(path.join(root, 'd4', 'e4', 'f4.txt'));
  fs.chmodSync(path.join(root, 'd5', 'e0', 'f65.txt'), 0o755);
  fs.renameSync(path.join(root, 'd6', 'e1', 'f66.txt'), path.join(root, 'd6', 'e1', 'moved.txt'));
  fs.mkdirSync(path.join(root, 'empty', 'new', 'deeper'), { recursive: true });
  fs.writeFileSync(path.join(root, 'empty', 'new', 'deeper', 'added.txt'), 'added');
  fs.writeFileSync(path.join(root, 'secrets', 'key.pem'), CANARY);
  fs.writeFileSync(path.join(root, 'd1', '.env'), `TOKEN=${CANARY}`);
  fs.writeFileSync(path.join(root, '.git', 'refs', 'heads', 'main'), '4567\n');
}

/** Counts the lists a real pool makes (so a test knows the workers did the listing) and the folders it answers "same" for (taken whole, nothing compared). */
function counted(pool: FolderLister): FolderLister & { lists: number; same: number } {
  const counting = {
    lists: 0,
    same: 0,
    get size() {
      return pool.size;
    },
    list: async (requests: readonly ListRequest[]) => {
      counting.lists += 1;
      const listings = await pool.list(requests);
      counting.same += listings.filter((listing) => 'same' in listing).length;
      return listings;
    },
  };
  return counting;
}

describe('the scan workers', () => {
  it('test_a_rescan_listed_by_the_workers_is_the_index_the_main_thread_makes_and_stores_no_denied_byte', async () => {
    const { root, blobsDir, options } = setUp();
    const before = scanRoot(root, {}, options);
    change(root);
    const pool = counted(new StatWorkers());
    const viaWorkers = await scanRootSliced(root, before, options, pool);
    expect(pool.lists).toBeGreaterThan(1);
    expect(viaWorkers.changed).toBe(true);
    expect(viaWorkers.index).toEqual(scanRoot(root, before, options));
    expect(viaWorkers.index['secrets/key.pem']).toMatchObject({ kind: 'file', stored: false, reason: 'deny-read' });
    expect(viaWorkers.index['d1/.env']).toMatchObject({ kind: 'file', stored: false, reason: 'deny-read' });
    expect(viaWorkers.index['d1/readme.md']).toMatchObject({ stored: true });
    expect(viaWorkers.index['passwd-link']).toMatchObject({ kind: 'link', target: '/etc/passwd', stored: false });
    expect(viaWorkers.index['empty/new/deeper/added.txt']).toMatchObject({ kind: 'file', stored: true });
    expect(viaWorkers.index['d4/e4/f4.txt']).toBeUndefined();
    options.blobs.flush();
    expect(filesHolding(blobsDir, CANARY)).toEqual([]);

    // Unchanged since: nothing differs, and nothing is read.
    const again = await scanRootSliced(root, viaWorkers.index, options, pool);
    expect(again.changed).toBe(false);
    expect(again.index).toEqual(viaWorkers.index);
  });

  it('test_a_worker_that_fails_mid_scan_leaves_the_scan_to_the_main_thread_with_the_same_index', async () => {
    const { root, options } = setUp();
    const before = scanRoot(root, {}, options);
    change(root);
    const real = new StatWorkers();
    let lists = 0;
    // The third list fails, as a worker that died would: two lists' folders were already compared.
    const failing: FolderLister = { size: 2, list: (folders) => (++lists === 3 ? Promise.reject(new Error('a scan worker exited (code 1)')) : real.list(folders)) };
    const scanned = await scanRootSliced(root, before, options, failing);
    expect(lists).toBeGreaterThanOrEqual(3);
    expect(scanned.index).toEqual(scanRoot(root, before, options));
  });

  it('test_a_worker_that_never_answers_ends_the_scan_at_its_deadline_as_untracked', async () => {
    const { root, options } = setUp();
    const before = scanRoot(root, {}, options);
    const hung: FolderLister = { size: 1, list: () => new Promise<Listing[]>(() => undefined) };
    const started = Date.now();
    const deadline = started + 300;
    await expect(scanRootSliced(root, before, { ...options, limits: { ...options.limits, deadline } }, hung)).rejects.toThrow(new Untracked(`scanning ${root} took longer than its time budget`));
    // It waited for the deadline (the timer's clock and Date's may differ by a millisecond), not gave up at once.
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });

  it('test_a_folder_listed_the_same_is_taken_whole_and_a_change_in_it_or_a_new_deny_read_list_is_still_seen', async () => {
    const { root, options } = setUp();
    const pool = counted(new StatWorkers());
    // The first re-scan lists every folder; the second finds them listed the same and takes them whole.
    const first = await scanRootSliced(root, scanRoot(root, {}, options), options, pool);
    const second = await scanRootSliced(root, first.index, options, pool);
    expect(second.changed).toBe(false);
    expect(pool.same).toBeGreaterThan(60);
    // Each scan's index is compared with one made from nothing (a scan against the same index would replace its folders' record).
    expect(second.index).toEqual(scanRoot(root, {}, options));

    // An edit of the same size in a folder taken whole last time: its listing differs (mtime, ctime), so it is compared.
    const edited = path.join(root, 'd3', 'e3', 'f123.txt');
    fs.writeFileSync(edited, fs.readFileSync(edited, 'utf8').replace('123', '321'));
    // A scan against another index of the same tree (one read from its file, as a new process has) does not undo that.
    await scanRootSliced(root, JSON.parse(JSON.stringify(second.index)) as typeof second.index, options, pool);
    const taken = pool.same;
    const third = await scanRootSliced(root, second.index, options, pool);
    expect(pool.same).toBeGreaterThan(taken + 60);
    expect(third.changed).toBe(true);
    expect(third.index['d3/e3/f123.txt']!.hash).not.toBe(second.index['d3/e3/f123.txt']!.hash);
    expect(third.index).toEqual(scanRoot(root, {}, options));

    // Nothing on disk changed, but a file is denied now: no folder judged by the old list is taken whole.
    const denyRead = [...options.denyRead, path.join(root, 'd1', 'readme.md')];
    const denied = await scanRootSliced(root, third.index, { ...options, denyRead }, pool);
    expect(denied.changed).toBe(true);
    expect(denied.index['d1/readme.md']).toMatchObject({ kind: 'file', stored: false, reason: 'deny-read' });
    expect(denied.index).toEqual(scanRoot(root, {}, { ...options, denyRead }));
  });

  it('test_a_folder_holding_a_stand_in_of_this_run_is_never_taken_whole', async () => {
    const { root, options } = setUp();
    // An empty file the agent made: indexed. In a later run the sandbox stands in for the same path (denied while missing).
    const empty = path.join(root, 'd2', 'e2', 'placeholder');
    fs.writeFileSync(empty, '');
    const pool = counted(new StatWorkers());
    const first = await scanRootSliced(root, scanRoot(root, {}, options), options, pool);
    const second = await scanRootSliced(root, first.index, options, pool);
    expect(second.index['d2/e2/placeholder']).toMatchObject({ kind: 'file', size: 0 });
    const standIns = new Set([empty]);
    const withStandIn = await scanRootSliced(root, second.index, { ...options, standIns }, pool);
    expect(withStandIn.index['d2/e2/placeholder']).toBeUndefined();
    expect(withStandIn.index).toEqual(scanRoot(root, {}, { ...options, standIns }));
  });
});
