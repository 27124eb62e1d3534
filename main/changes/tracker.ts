/**
 * Tracking one run's file changes (X1): `snapshotBefore` indexes every writable root before the
 * turn, `snapshotAfter` indexes them again and diffs. Each root's last index is kept per
 * conversation (JSON, written whole by rename, and only when it changed), so the next turn's
 * scan re-reads only what changed. A limit or failure becomes `Untracked` with its reason; the caller journals it.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FileChange } from '../../common/events.js';
import { isProcessAlive } from '../base/process.js';
import { BlobStore, sha256 } from './blobs.js';
import { diffIndexes } from './diff.js';
import { DEFAULT_SCAN_LIMITS, scanRootSliced, sizeOf, Untracked } from './scan.js';
import { under, type TreeIndex } from './tree-index.js';
import { keepQuietTree, takeQuietTree } from './quiet-trees.js';
import { sweepBarriers, TreeWatch } from './watch.js';

export interface TrackingLimits {
  readonly maxFiles: number;
  readonly maxFileBytes: number;
  /** How long one scan (all roots) may take. */
  readonly budgetMs: number;
}

/** A namespace's change data: blobs, the last index of each root per conversation, rewind intents. */
export class ChangeStore {
  readonly blobs: BlobStore;

  constructor(readonly dir: string) {
    this.blobs = new BlobStore(path.join(dir, 'blobs'));
  }

  private indexFile(conversationId: string, root: string): string {
    return path.join(this.dir, 'index', conversationId, `${sha256(root).slice(0, 32)}.json`);
  }

  readIndex(conversationId: string, root: string): TreeIndex {
    return this.readIndexFile(this.indexFile(conversationId, root));
  }

  private readIndexFile(file: string): TreeIndex {
    const waiting = unwritten.get(file);
    if (waiting !== undefined) return waiting;
    const stamp = stampOf(file);
    const cached = recentIndexes.get(file);
    if (cached !== undefined && stamp !== null && cached.stamp === stamp) return cached.index;
    try {
      const index = JSON.parse(fs.readFileSync(file, 'utf8')) as TreeIndex;
      remember(file, index, stamp);
      return index;
    } catch {
      // None yet, or unreadable: the scan reads every file once more.
      return {};
    }
  }

  /** Where an end scan's watch writes the file that closes it (./watch.ts). */
  get barrierDir(): string {
    return path.join(this.dir, 'barriers');
  }

  /** What a process killed mid-scan left: packs without an index, index files never renamed into place, a watch's closing file. */
  sweep(): void {
    this.blobs.sweep();
    sweepBarriers(this.barrierDir);
    const indexes = path.join(this.dir, 'index');
    for (const conversation of readdirOrNone(indexes)) {
      for (const name of readdirOrNone(path.join(indexes, conversation))) {
        const owner = /\.tmp-(\d{1,10})$/.exec(name);
        if (owner !== null && (Number(owner[1]) === process.pid || !isProcessAlive(Number(owner[1])))) fs.rmSync(path.join(indexes, conversation, name), { force: true });
      }
    }
  }

  /**
   * The blobs the last indexes of `conversations` name (bytes a change to come may need as its
   * `before`); the indexes of conversations not among them are dropped.
   */
  indexedHashes(conversations: ReadonlySet<string>): Set<string> {
    writeUnwritten();
    const hashes = new Set<string>();
    const indexes = path.join(this.dir, 'index');
    for (const conversation of readdirOrNone(indexes)) {
      const dir = path.join(indexes, conversation);
      if (!conversations.has(conversation)) {
        fs.rmSync(dir, { recursive: true, force: true });
        continue;
      }
      for (const name of readdirOrNone(dir)) {
        if (!name.endsWith('.json')) continue;
        for (const entry of Object.values(this.readIndexFile(path.join(dir, name)))) if (entry.stored && entry.hash !== null) hashes.add(entry.hash);
      }
    }
    return hashes;
  }

  writeIndex(conversationId: string, root: string, index: TreeIndex): void {
    const file = this.indexFile(conversationId, root);
    unwritten.delete(file);
    writeIndexFile(file, index);
  }

  /**
   * `writeIndex` once the turn's record is whole, not on its path (10,000 entries are ~30 ms of
   * JSON): read as kept meanwhile. A process killed first leaves the index before it: the next
   * scan then finds this turn's changes again, as made between turns (the turn journaled them).
   */
  keepIndex(conversationId: string, root: string, index: TreeIndex): void {
    unwritten.set(this.indexFile(conversationId, root), index);
    writing ??= setImmediate(writeUnwritten);
  }
}

/** Indexes kept but not written yet, by file (`keepIndex`). */
const unwritten = new Map<string, TreeIndex>();
let writing: NodeJS.Immediate | undefined;

function writeUnwritten(): void {
  if (writing !== undefined) clearImmediate(writing);
  writing = undefined;
  for (const [file, index] of unwritten) {
    unwritten.delete(file);
    try {
      writeIndexFile(file, index);
    } catch {
      // The next scan reads every changed file again; the turn's own record is whole.
    }
  }
}

function writeIndexFile(file: string, index: TreeIndex): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(temporary, JSON.stringify(index), { mode: 0o600 });
  fs.renameSync(temporary, file);
  remember(file, index, stampOf(file));
}

/**
 * The last indexes this process wrote or read, by file and the file's stat when it did (written
 * by rename, a new index file is a new inode): the next turn's scan starts from the same object,
 * without parsing it again, and compares its folders by position (scan.ts).
 */
const recentIndexes = new Map<string, { readonly index: TreeIndex; readonly stamp: string }>();
const RECENT_INDEXES = 8;

function stampOf(file: string): string | null {
  const stat = fs.statSync(file, { throwIfNoEntry: false });
  return stat === undefined ? null : `${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`;
}

function remember(file: string, index: TreeIndex, stamp: string | null): void {
  recentIndexes.delete(file);
  if (stamp === null) return;
  recentIndexes.set(file, { index, stamp });
  if (recentIndexes.size > RECENT_INDEXES) recentIndexes.delete(recentIndexes.keys().next().value!);
}

function readdirOrNone(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

/** The writable roots of a run, without those inside another (a grant inside the workspace). */
export function trackedRoots(roots: readonly string[]): string[] {
  const unique = [...new Set(roots.map((root) => path.resolve(root)))];
  return unique.filter((root) => !unique.some((other) => other !== root && under([other], root)));
}

export interface Snapshot {
  readonly conversationId: string;
  readonly roots: ReadonlyMap<string, TreeIndex>;
  readonly denyRead: readonly string[];
  /** The sandbox's stand-ins while the run lasts, never indexed (./scan.ts). */
  readonly standIns: ReadonlySet<string>;
  /** Roots whose index here is newer than the one kept (a scan in the turn that did not keep it). */
  readonly unsaved?: ReadonlySet<string>;
  /** Hears every change in the roots' folders since they were read (./watch.ts, recording): the next scan reads only the folders it heard of. */
  readonly watch?: TreeWatch;
}

export interface Scanned {
  readonly index: TreeIndex;
  readonly changed: boolean;
}

async function scanAll(store: ChangeStore, roots: readonly string[], previous: (root: string) => TreeIndex, denyRead: readonly string[], standIns: ReadonlySet<string>, limits: TrackingLimits, watch?: TreeWatch): Promise<Map<string, Scanned>> {
  const deadline = Date.now() + limits.budgetMs;
  const scanned = new Map<string, Scanned>();
  // A recording watch that can say where it heard changes: only those folders are read; one that cannot starts again.
  const recorded = watch !== undefined && (await watch.changedFolders()) !== null;
  if (!recorded) watch?.restart();
  try {
    for (const root of roots) {
      const watching = watch === undefined ? {} : { watch: (folder: string) => watch.watch(folder), ...(recorded ? { unchanged: (folder: string) => watch.unchanged(folder) } : {}) };
      const options = { blobs: store.blobs, limits: { ...limits, deadline }, denyRead, standIns, ...watching };
      scanned.set(root, await scanRootSliced(root, previous(root), options));
    }
  } catch (error) {
    if (error instanceof Untracked) throw error;
    throw new Untracked(`the scan failed: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    // What was stored is whole: its index makes it count (an index naming a blob is written after this).
    store.blobs.flush();
  }
  return scanned;
}

export { Untracked };

export const DEFAULT_TRACKING_LIMITS: TrackingLimits = DEFAULT_SCAN_LIMITS;

/**
 * The state of every root before a turn; throws `Untracked` past a limit. `standIns`: paths the
 * sandbox denied the run while they were missing, by an empty file of its own there while the
 * sandbox runs (the agent cannot write them): an empty file at one of them is not indexed.
 */
export async function snapshotBefore(store: ChangeStore, conversationId: string, roots: readonly string[], denyRead: readonly string[], limits: TrackingLimits, standIns: readonly string[] = []): Promise<Snapshot> {
  const sandboxOwn = new Set(standIns);
  const tracked = trackedRoots(roots);
  const watch = keptWatch(store, conversationId, tracked, denyRead, limits) ?? TreeWatch.recording(store.barrierDir);
  let scanned: Map<string, Scanned>;
  try {
    scanned = await scanAll(store, tracked, (root) => store.readIndex(conversationId, root), denyRead, sandboxOwn, limits, watch);
  } catch (error) {
    watch.close();
    throw error;
  }
  const indexes = new Map<string, TreeIndex>();
  for (const [root, { index, changed }] of scanned) {
    indexes.set(root, index);
    // Changed between turns (by the person): kept now, so the next scan is a stat walk again even if this turn fails.
    if (changed) store.writeIndex(conversationId, root, index);
  }
  return { conversationId, roots: indexes, denyRead, standIns: sandboxOwn, watch };
}

const quietKey = (store: ChangeStore, conversationId: string): string => `${store.dir}\0${conversationId}`;

/** The watch the conversation's last turn kept (./quiet-trees.ts), when what its scans depend on is the same; else none. */
function keptWatch(store: ChangeStore, conversationId: string, roots: readonly string[], denyRead: readonly string[], limits: TrackingLimits): TreeWatch | undefined {
  const tree = takeQuietTree(quietKey(store, conversationId));
  if (tree === undefined) return undefined;
  const same =
    tree.maxFiles === limits.maxFiles &&
    tree.maxFileBytes === limits.maxFileBytes &&
    tree.denyRead.join('\0') === denyRead.join('\0') &&
    tree.roots.size === roots.length &&
    // Another index kept since (a rewind, another process's turn) was read by a scan this watch did not follow.
    roots.every((root) => tree.roots.get(root) === store.readIndex(conversationId, root));
  if (same) return tree.watch;
  tree.watch.close();
  return undefined;
}

/**
 * After a turn, with `after` (the state its end scan kept) and `watch`, recording since: the
 * conversation's next turn in this process reads only the folders the watch hears of meanwhile.
 */
export function keepWatching(store: ChangeStore, after: Snapshot, watch: TreeWatch, limits: TrackingLimits): void {
  keepQuietTree(quietKey(store, after.conversationId), { watch, roots: after.roots, denyRead: after.denyRead, maxFiles: limits.maxFiles, maxFileBytes: limits.maxFileBytes });
}

/**
 * What changed since `before`, every changed root's new index kept for the next turn unless
 * `keep` is false (a scan after a tool call: the turn's end scan keeps them, one write per root),
 * and the state now, for a later scan of the same turn to diff against; throws
 * `Untracked` past a limit.
 */
export async function snapshotAfter(store: ChangeStore, before: Snapshot, limits: TrackingLimits, keep = true): Promise<{ changes: FileChange[]; files: number; snapshot: Snapshot }> {
  return diffAfter(store, before, await scanAfter(store, before, limits), keep);
}

/**
 * Every root of `before` scanned again against it: the folders its recording watch heard of, or
 * every folder with `watch` hearing of any change after each folder's read (./watch.ts). Throws `Untracked` past a limit.
 */
export function scanAfter(store: ChangeStore, before: Snapshot, limits: TrackingLimits, watch?: TreeWatch): Promise<Map<string, Scanned>> {
  return scanAll(store, [...before.roots.keys()], (root) => before.roots.get(root)!, before.denyRead, before.standIns, limits, watch ?? before.watch);
}

/** `snapshotAfter` from a scan already made (`scanAfter`). */
export function diffAfter(store: ChangeStore, before: Snapshot, after: ReadonlyMap<string, Scanned>, keep = true): { changes: FileChange[]; files: number; snapshot: Snapshot } {
  const changes: FileChange[] = [];
  let files = 0;
  const unsaved = new Set(before.unsaved);
  for (const [root, { index, changed }] of after) {
    if (changed) changes.push(...diffIndexes(root, before.roots.get(root)!, index));
    files += sizeOf(index);
    if (changed) unsaved.add(root);
  }
  if (keep) {
    for (const root of unsaved) store.keepIndex(before.conversationId, root, after.get(root)!.index);
    unsaved.clear();
  }
  // The state now, for a later scan in the same turn (per-call capture) to diff against.
  return { changes, files, snapshot: { ...before, roots: new Map([...after].map(([root, { index }]) => [root, index])), unsaved } };
}
