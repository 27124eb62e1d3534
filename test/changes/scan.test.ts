/**
 * main/changes on real files (no process, no network): an unchanged tree is re-scanned without a
 * read, .git/ is HEAD and refs, special, oversized and linked files are metadata, renames pair up,
 * and a rewind plan refuses what it cannot restore and names conflicts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { changeStoreFor } from '../../main/app/changes.js';
import { checkNamespaces } from '../../main/app/doctor.js';
import { BlobStore, sha256 } from '../../main/changes/blobs.js';
import { parseNamespace } from '../../main/namespaces/namespace.js';
import { DataFolder } from '../../main/store/data-folder.js';
import { diffIndexes } from '../../main/changes/diff.js';
import { conflicts, planRewind } from '../../main/changes/rewind.js';
import { scanRoot, scanRootSliced, Untracked, type ScanOptions } from '../../main/changes/scan.js';
import { ChangeStore, trackedRoots } from '../../main/changes/tracker.js';
import { tempDir } from '../support/temp.js';

function setUp(): { root: string; options: ScanOptions; blobs: BlobStore } {
  const base = tempDir('ward-scan-');
  const root = path.join(base, 'root');
  fs.mkdirSync(root);
  const blobs = new BlobStore(path.join(base, 'blobs'));
  return { root, blobs, options: { blobs, limits: { maxFiles: 1000, maxFileBytes: 64, deadline: Number.MAX_SAFE_INTEGER }, denyRead: [] } };
}

describe('the change scan', () => {
  it('test_an_unchanged_file_keeps_its_index_entry_without_a_read_and_a_changed_one_is_read_again', () => {
    const { root, options } = setUp();
    fs.writeFileSync(path.join(root, 'a.txt'), 'one');
    const first = scanRoot(root, {}, options);
    // The stat cache is trusted: a lying index entry with the same stat survives (nothing was read).
    const lying = { 'a.txt': { ...first['a.txt']!, hash: 'f'.repeat(64) } };
    expect(scanRoot(root, lying, options)['a.txt']!.hash).toBe('f'.repeat(64));
    fs.writeFileSync(path.join(root, 'a.txt'), 'two!');
    expect(scanRoot(root, lying, options)['a.txt']!.hash).not.toBe('f'.repeat(64));
  });

  it('test_git_is_recorded_as_head_and_refs_and_links_and_big_files_as_metadata', () => {
    const { root, options, blobs } = setUp();
    fs.mkdirSync(path.join(root, '.git', 'objects', 'ab'), { recursive: true });
    fs.mkdirSync(path.join(root, '.git', 'refs', 'heads'), { recursive: true });
    fs.writeFileSync(path.join(root, '.git', 'HEAD'), 'ref: refs/heads/main\n');
    fs.writeFileSync(path.join(root, '.git', 'refs', 'heads', 'main'), '0123\n');
    fs.writeFileSync(path.join(root, '.git', 'objects', 'ab', 'cdef'), 'object');
    fs.writeFileSync(path.join(root, '.git', 'config'), '[core]');
    fs.symlinkSync('/etc/passwd', path.join(root, 'link'));
    fs.writeFileSync(path.join(root, 'big.bin'), Buffer.alloc(65));
    const index = scanRoot(root, {}, options);
    expect(Object.keys(index).sort()).toEqual(['.git/HEAD', '.git/refs/heads/main', 'big.bin', 'link']);
    expect(index.link).toMatchObject({ kind: 'link', target: '/etc/passwd', stored: false });
    expect(index['big.bin']).toMatchObject({ kind: 'file', hash: null, stored: false, reason: 'over 64 bytes' });
    expect(blobs.size().blobs).toBe(2);
  });

  it('test_more_files_than_the_limit_is_untracked_with_the_reason', () => {
    const { root, options } = setUp();
    for (const name of ['a', 'b', 'c']) fs.writeFileSync(path.join(root, name), name);
    expect(() => scanRoot(root, {}, { ...options, limits: { ...options.limits, maxFiles: 2 } })).toThrow(new Untracked(`${root} holds more than 2 files`));
  });

  it('test_a_moved_file_is_a_rename_and_nested_roots_are_tracked_once', () => {
    const { root, options } = setUp();
    fs.writeFileSync(path.join(root, 'old.txt'), 'same bytes');
    const before = scanRoot(root, {}, options);
    fs.renameSync(path.join(root, 'old.txt'), path.join(root, 'new.txt'));
    expect(diffIndexes(root, before, scanRoot(root, before, options))).toMatchObject([{ change: 'renamed', from: 'old.txt', path: 'new.txt' }]);
    expect(trackedRoots(['/w', '/w/sub', '/other', '/w2'])).toEqual(['/w', '/other', '/w2']);
  });

  it('test_a_rewind_plan_skips_git_and_unkept_bytes_and_names_a_file_changed_since', () => {
    const { root, options, blobs } = setUp();
    fs.mkdirSync(path.join(root, '.git'));
    fs.writeFileSync(path.join(root, '.git', 'HEAD'), 'one');
    fs.writeFileSync(path.join(root, 'kept.txt'), 'kept');
    const before = scanRoot(root, {}, options);
    fs.writeFileSync(path.join(root, '.git', 'HEAD'), 'two');
    fs.writeFileSync(path.join(root, 'kept.txt'), 'changed');
    const changes = diffIndexes(root, before, scanRoot(root, before, options));
    const plan = planRewind(changes, blobs);
    expect(plan.skipped).toEqual([{ path: path.join(root, '.git/HEAD'), reason: 'inside .git/ (a rewind never writes there)' }]);
    expect(plan.ops.map((op) => op.path)).toEqual(['kept.txt']);
    expect(conflicts(plan)).toEqual([]);
    fs.writeFileSync(path.join(root, 'kept.txt'), 'changed by someone else');
    expect(conflicts(plan).map((conflict) => conflict.path)).toEqual([path.join(root, 'kept.txt')]);
  });
});

describe('the first snapshot of a big tree', () => {
  it('test_storing_a_thousand_files_creates_one_pack_and_its_index_not_a_file_per_blob', () => {
    const { root, options, blobs } = setUp();
    for (let index = 0; index < 1000; index += 1) fs.writeFileSync(path.join(root, `f${index}`), `file ${index}`);
    const index = scanRoot(root, {}, { ...options, limits: { ...options.limits, maxFiles: 2000 } });
    blobs.flush();
    // Creating a file per blob was what a first snapshot spent its time on.
    expect(fs.readdirSync(blobs.dir).sort()).toEqual([expect.stringMatching(/^\d+-[0-9a-f]{12}\.idx$/), expect.stringMatching(/^\d+-[0-9a-f]{12}\.pack$/)]);
    // Another process (another store) reads every blob back, byte-exact.
    const other = new BlobStore(blobs.dir);
    expect(other.size().blobs).toBe(1000);
    expect(other.read(index.f999!.hash!).toString()).toBe('file 999');
  });

  it('test_a_sliced_scan_lets_the_event_loop_run_and_indexes_what_the_whole_scan_does', async () => {
    const { root, options } = setUp();
    for (let dir = 0; dir < 40; dir += 1) {
      fs.mkdirSync(path.join(root, `d${dir}`));
      for (let file = 0; file < 50; file += 1) fs.writeFileSync(path.join(root, `d${dir}`, `f${file}`), `${dir}/${file}`);
    }
    const limits = { ...options.limits, maxFiles: 5000 };
    const whole = scanRoot(root, {}, { ...options, limits });
    let turns = 0;
    const ticker = setInterval(() => (turns += 1), 0);
    let sliced: Awaited<ReturnType<typeof scanRootSliced>>;
    try {
      // Far longer than a slice: every one of 2,000 files is read and hashed (no previous index).
      sliced = await scanRootSliced(root, {}, { ...options, limits });
    } finally {
      clearInterval(ticker);
    }
    expect(turns).toBeGreaterThan(0);
    expect(sliced.index).toEqual(whole);
    expect(sliced.changed).toBe(true);
    expect(await scanRootSliced(root, whole, { ...options, limits })).toMatchObject({ changed: false });
  });
});

describe('what makes a re-scan cheap', () => {
  it('test_a_rescan_against_a_scans_own_index_sees_files_added_removed_renamed_and_edited_as_one_against_the_parsed_index_does', () => {
    const { root, options } = setUp();
    fs.mkdirSync(path.join(root, 'd'));
    for (const name of ['a', 'b', 'c', 'f', 'g']) fs.writeFileSync(path.join(root, 'd', name), name);
    // Scanned in this process, the index carries each folder's listing order (the next scan compares by position).
    const before = scanRoot(root, {}, options);
    fs.rmSync(path.join(root, 'd', 'b'));
    fs.writeFileSync(path.join(root, 'd', 'bb'), 'new');
    fs.renameSync(path.join(root, 'd', 'f'), path.join(root, 'd', 'e'));
    fs.writeFileSync(path.join(root, 'd', 'g'), 'edited');
    const after = scanRoot(root, before, options);
    // The same index read back from disk has no listing order: every path is looked up by name.
    expect(after).toEqual(scanRoot(root, JSON.parse(JSON.stringify(before)) as typeof before, options));
    expect(Object.keys(after).sort()).toEqual(['d/a', 'd/bb', 'd/c', 'd/e', 'd/g']);
    const changes = diffIndexes(root, before, after).map((change) => [change.change, change.path]);
    expect(changes.sort()).toEqual([['added', 'd/bb'], ['deleted', 'd/b'], ['modified', 'd/g'], ['renamed', 'd/e']]);
  });

  it('test_a_blob_is_read_back_byte_exact_before_its_pack_is_flushed_and_one_bigger_than_the_stage_too', () => {
    const { blobs } = setUp();
    const small = Buffer.from('small blob');
    const big = Buffer.alloc(5 * 1024 * 1024 + 7, 7);
    big.write('big blob');
    blobs.put(sha256(small), small);
    // Still gathered in memory, not yet in the pack: read in this process at once.
    expect(blobs.read(sha256(small))).toEqual(small);
    blobs.put(sha256(big), big);
    blobs.put(sha256('after'), Buffer.from('after'));
    expect(blobs.read(sha256(big)).equals(big)).toBe(true);
    expect(blobs.read(sha256('after')).toString()).toBe('after');
    blobs.flush();
    const other = new BlobStore(blobs.dir);
    expect(other.read(sha256(small))).toEqual(small);
    expect(other.read(sha256(big)).equals(big)).toBe(true);
  });

  it('test_an_index_kept_in_memory_is_used_only_while_its_file_is_the_one_this_process_wrote', () => {
    const store = new ChangeStore(path.join(tempDir('ward-index-'), 'changes'));
    const first = { 'a.txt': { kind: 'file', size: 1, mode: 0o100644, hash: sha256('a'), stored: true, mtimeMs: 1, ctimeMs: 1, ino: 1 } } as const;
    store.writeIndex('c1', '/r', first);
    expect(new ChangeStore(store.dir).readIndex('c1', '/r')).toBe(first);
    // Another process writes the conversation's index (by rename, as writeIndex does).
    const other = { 'b.txt': { ...first['a.txt'], hash: sha256('b') } };
    const file = path.join(store.dir, 'index', 'c1', `${sha256('/r').slice(0, 32)}.json`);
    fs.writeFileSync(`${file}.other`, JSON.stringify(other));
    fs.renameSync(`${file}.other`, file);
    expect(store.readIndex('c1', '/r')).toEqual(other);
  });
});

describe('the store\'s retention', () => {
  it('test_collect_keeps_what_a_journal_names_drops_what_nothing_names_and_evicts_the_oldest_cached_first_over_the_cap', () => {
    const { blobs } = setUp();
    const put = (text: string, at: number) => {
      const hash = sha256(text);
      blobs.put(hash, Buffer.from(text));
      blobs.put(sha256(`${text} alone`), Buffer.from(`${text} alone`));
      blobs.flush();
      const index = fs.readdirSync(blobs.dir).find((name) => name.endsWith('.idx') && fs.statSync(path.join(blobs.dir, name)).mtimeMs > 1e12)!;
      // Oldest first is by each pack's index time.
      fs.utimesSync(path.join(blobs.dir, index), at, at);
      return hash;
    };
    const [journaled, oldCached, newCached] = [put('a'.repeat(1000), 100), put('b'.repeat(1000), 200), put('c'.repeat(1000), 300)];
    const result = blobs.collect(new Set([journaled]), new Set([oldCached, newCached]), 2500);
    expect(result).toEqual({ removed: 4, freedBytes: 1000 + 3 * 1006 });
    const fresh = new BlobStore(blobs.dir);
    expect([journaled, oldCached, newCached].map((hash) => fresh.has(hash))).toEqual([true, false, true]);
    expect(fresh.read(newCached).toString()).toBe('c'.repeat(1000));
    expect(fresh.has(sha256(`${'a'.repeat(1000)} alone`))).toBe(false);
    expect(fresh.size()).toEqual({ blobs: 2, bytes: 2000 });
    // Under the cap, nothing only an index names goes; a journal's blob stays over any cap.
    expect(fresh.collect(new Set([journaled]), new Set([newCached]), 1)).toEqual({ removed: 1, freedBytes: 1000 });
    expect(new BlobStore(blobs.dir).size()).toEqual({ blobs: 1, bytes: 1000 });
  });
});

describe('ward doctor and the file-change store', () => {
  it('test_doctor_reports_each_namespace_file_change_store_size', () => {
    const home = tempDir('ward-doctor-changes-');
    const folder = new DataFolder(home);
    try {
      const ns = parseNamespace('default');
      folder.store(ns);
      const blobs = changeStoreFor(home, ns).blobs;
      blobs.put(sha256('twelve bytes'), Buffer.from('twelve bytes'));
      blobs.flush();
      const [check] = checkNamespaces(folder);
      expect(check!.detail).toContain('file-change store 1 blob(s), 12 bytes');
      expect(check!.data).toMatchObject({ changeStore: { blobs: 1, bytes: 12 } });
    } finally {
      folder.close();
    }
  });
});
