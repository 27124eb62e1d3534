/**
 * A writable root's state as an index of path → entry, git-index style: an entry whose size,
 * mtime, ctime, inode and mode are what the previous index says keeps its hash without a read,
 * so an unchanged tree costs one `lstat` walk. Regular files are hashed and their bytes stored as
 * blobs, unless the agent may not read them (deny-read: hash and size only), they are over the
 * size cap or unreadable (metadata and a reason). Symlinks are recorded by their target, never
 * followed; other special files by metadata. Inside `.git/` only HEAD and refs are recorded.
 * One synchronous `lstat` per path (as git's own status does; measured faster than the thread
 * pool's), on the scan workers for a re-scan of a tree of some size, else in slices between which
 * the event loop runs, and bounded by a file count and a deadline: past either the scan throws
 * `Untracked` and the run goes on untracked.
 */
import fs from 'node:fs';
import path from 'node:path';
import { readWhole, sha256, type BlobStore } from './blobs.js';
import { isFile, isFolder, isLink, special, under, type IndexEntry, type TreeIndex } from './tree-index.js';
import { statAt, statWorkers, type FolderLister, type Listing, type ListRequest, type Stat } from './stat-workers.js';

export interface ScanLimits {
  /** More files than this in one root: the run is not tracked (default 200,000). */
  readonly maxFiles: number;
  /** A file bigger than this is recorded by metadata only (default 10 MB). */
  readonly maxFileBytes: number;
  /** When the scan must have ended (Date.now() milliseconds). */
  readonly deadline: number;
}

/**
 * The scan before a turn runs beside the CLI's start, and the turn's first model call waits for
 * it: its budget is what a person waits at most for tracking, so it is short.
 */
export const DEFAULT_SCAN_LIMITS = { maxFiles: 200_000, maxFileBytes: 10 * 1024 * 1024, budgetMs: 5_000 } as const;

/** Why a run's changes are not tracked. */
export class Untracked extends Error {}

export interface ScanOptions {
  readonly blobs: BlobStore;
  readonly limits: ScanLimits;
  /** Absolute paths the agent may not read (a file at one or under one): their bytes are never stored. */
  readonly denyRead: readonly string[];
  /** The sandbox's stand-ins (../sandbox/built-in-denies.ts): an empty file at one is its own, never the agent's, and not indexed. */
  readonly standIns?: ReadonlySet<string>;
  /** Called before each folder (or a root that is one file) is read: the end scan's watch (./watch.ts). */
  readonly watch?: (absolute: string) => void;
  /**
   * Whether nothing changed in the folder `absolute` since the previous index's scan read it (a
   * recording watch heard nothing there, ./watch.ts): its files and sub-folders are taken from
   * that scan without a read. Given, the scan runs on this thread: it reads a few folders.
   */
  readonly unchanged?: (absolute: string) => boolean;
}

/** A folder's files in the order it listed them, their index keys and entries, and its sub-folders' names. */
interface Files {
  readonly names: string[];
  readonly keys: string[];
  /** In the order of `keys`: a folder taken whole adds them without looking each up among 10,000 keys. */
  readonly entries: IndexEntry[];
  readonly folders: string[];
  /**
   * The scan workers' listing these were made from, and the deny-read list they were judged by:
   * the next scan takes the folder whole when its worker lists it the same (./stat-workers.ts): a
   * file written after its listing has a new ctime, so its folder lists differently. Absent when an
   * entry went away before its lstat or was a stand-in: the next scan compares the folder again.
   */
  listed?: { readonly id: number; readonly denyKey: string };
}
type Layout = Map<string, Files>;
/** The layout of each index a scan in this process made (an index read from disk has none). */
const layouts = new WeakMap<TreeIndex, Layout>();
/** How many entries each index seen here has: counted once (counting 10,000 keys was a re-scan's slowest step on this thread). */
const sizes = new WeakMap<TreeIndex, number>();

/** How many entries `index` has. */
export function sizeOf(index: TreeIndex): number {
  let size = sizes.get(index);
  if (size === undefined) {
    size = Object.keys(index).length;
    sizes.set(index, size);
  }
  return size;
}

const CHECK_CLOCK_EVERY = 256;
/** How long the sliced scan works before it lets the event loop run (the broker, the gateway, the CLI's stream). */
const SLICE_MS = 8;
/** Folders a scan worker lists per message, and messages in flight per worker. */
const FOLDERS_PER_LIST = 8;
const IN_FLIGHT_PER_WORKER = 2;
/** A previous index this small is re-scanned on this thread: a few milliseconds, less than a round trip to the workers would save. */
const WORKERS_FROM_ENTRIES = 1_000;

/** Which files of a folder the agent may not read: decided once per folder, so a file costs no path of its own. */
type Denial = 'all' | 'none' | 'some';

class Walk {
  /** The index, once the walk finished: `previous` itself when nothing differs. */
  index: TreeIndex = {};
  /** Each file's key and entry in walk order, made into an index only if anything differs (most re-scans: nothing). */
  private readonly keys: string[] = [];
  private readonly entryList: IndexEntry[] = [];
  /** A worker listing's stat, filled per entry (nothing keeps it: an entry copies its numbers). */
  private readonly scratch = { mode: 0, size: 0, ino: 0, mtimeMs: 0, ctimeMs: 0 };
  /** Whether any entry is new or differs from the previous index's (or one went away). */
  changed = false;
  private count = 0;
  private reused = 0;
  /** Folders still to read: relative path and whether it is inside `.git/`. */
  private readonly folders: [string, boolean][] = [];
  /** Each folder's files in listing order, for the next scan against this one's index. */
  readonly layout: Layout = new Map();
  private readonly previousLayout: Layout | undefined;
  /** The deny-read list as one string: a folder is taken whole only if judged by the same one. */
  private readonly denyKey: string;
  /** Folders holding a stand-in of this run: never taken whole (an empty file there may now be the sandbox's). */
  private readonly standInFolders: ReadonlySet<string>;

  constructor(
    private readonly root: string,
    private readonly previous: TreeIndex,
    private readonly options: ScanOptions,
  ) {
    this.previousLayout = layouts.get(previous);
    this.denyKey = options.denyRead.join('\0');
    this.standInFolders = new Set([...(options.standIns ?? [])].map((standIn) => path.dirname(standIn)));
  }

  begin(): void {
    this.options.watch?.(this.root);
    let stat: fs.Stats | undefined;
    try {
      stat = fs.statSync(this.root);
    } catch {
      // A missing root is empty.
    }
    // A write grant may name one file: its one entry has the empty path.
    if (stat?.isDirectory() === true) this.folders.push(['', false]);
    else if (stat !== undefined) this.file('', fs.lstatSync(this.root));
  }

  /** Reads folders until none is left (true) or `until` (performance.now()) has passed. */
  work(until: number): boolean {
    while (this.folders.length > 0) {
      const [relative, inGit] = this.folders.pop()!;
      this.directory(relative, inGit);
      if (performance.now() > until) break;
    }
    if (this.folders.length > 0) return false;
    this.finish();
    return true;
  }

  private finish(): void {
    if (this.reused !== sizeOf(this.previous)) this.changed = true;
    if (this.changed) {
      const index: TreeIndex = {};
      for (let at = 0; at < this.keys.length; at += 1) index[this.keys[at]!] = this.entryList[at]!;
      this.index = index;
      sizes.set(index, this.keys.length);
    } else this.index = this.previous;
    layouts.set(this.index, this.layout);
  }

  /**
   * A folder's entries. Unchanged, a folder lists its names in the order it did before: each
   * file then takes the previous scan's path string by position, a key already hashed, instead of
   * a new string looked up among 10,000 keys.
   */
  private directory(relative: string, inGit: boolean): void {
    const absolute = this.absolute(relative);
    const before = this.previousLayout?.get(relative);
    if (before !== undefined && this.options.unchanged?.(absolute) === true) {
      this.reuse(relative, inGit, before);
      return;
    }
    let names: string[];
    this.options.watch?.(absolute);
    try {
      // Names only: each is lstat'ed anyway, and that says which is a folder (measured cheaper than typed entries).
      names = fs.readdirSync(absolute);
    } catch (error) {
      this.unreadable(relative, (error as NodeJS.ErrnoException).code);
      return;
    }
    this.entries(relative, inGit, names, (_, name) => fs.lstatSync(`${absolute}/${name}`, { throwIfNoEntry: false }));
  }

  /**
   * A folder's `names` (in listing order) with their stats (undefined: gone between the folder's
   * read and its lstat); `listing`: the scan workers' id of that listing.
   */
  private entries(relative: string, inGit: boolean, names: readonly string[], statOf: (index: number, name: string) => Stat | undefined, listing?: number): void {
    const absolute = this.absolute(relative);
    const before = this.previousLayout?.get(relative);
    const denial = this.denialIn(absolute);
    const files: Files = { names: [], keys: [], entries: [], folders: [] };
    let aligned = before !== undefined;
    let whole = listing !== undefined;
    for (let index = 0; index < names.length; index += 1) {
      const name = names[index]!;
      // Gone between the folder's read and now (the agent deleted it): not there.
      const stat = statOf(index, name);
      if (stat === undefined || (stat.size === 0 && isFile(stat) && this.options.standIns?.has(`${absolute}/${name}`) === true)) {
        whole = false;
        continue;
      }
      if (isFolder(stat)) {
        files.folders.push(name);
        this.folder(relative, inGit, name);
        continue;
      }
      let key: string;
      if (aligned && before!.names[files.names.length] === name) key = before!.keys[files.names.length]!;
      else {
        aligned = false;
        key = relative === '' ? name : `${relative}/${name}`;
      }
      files.names.push(name);
      files.keys.push(key);
      files.entries.push(this.file(key, stat, denial));
    }
    if (whole) files.listed = { id: listing!, denyKey: this.denyKey };
    this.layout.set(relative, files);
  }

  private folder(parent: string, inGit: boolean, name: string): void {
    const child = parent === '' ? name : `${parent}/${name}`;
    if (!inGit && name === '.git') this.git(child);
    else this.folders.push([child, inGit]);
  }

  /** A folder nothing changed in: its files and sub-folders as the previous scan found them, without a system call. */
  private reuse(relative: string, inGit: boolean, files: Files): void {
    for (let at = 0; at < files.keys.length; at += 1) this.add(files.keys[at]!, files.entries[at]!);
    this.count += files.keys.length;
    if (this.count > this.options.limits.maxFiles) throw new Untracked(`${this.root} holds more than ${this.options.limits.maxFiles} files`);
    this.reused += files.keys.length;
    for (const name of files.folders) this.folder(relative, inGit, name);
    this.layout.set(relative, files);
  }

  /**
   * The folders still to read, listed by the scan workers a few at a time, with a few lists in
   * flight: this thread compares one folder's entries while the workers list the next. False
   * when a worker failed (the folders not yet compared are back on the list, for `work`).
   */
  async workOn(workers: FolderLister): Promise<boolean> {
    const inFlight: { readonly folders: [string, boolean][]; readonly listed: Promise<Listing[]> }[] = [];
    for (;;) {
      while (this.folders.length > 0 && inFlight.length < workers.size * IN_FLIGHT_PER_WORKER) {
        const folders = this.folders.splice(Math.max(0, this.folders.length - FOLDERS_PER_LIST));
        const requests = folders.map(([relative]) => this.request(relative));
        // Watched before it is read, as on this thread.
        for (const { folder } of requests) this.options.watch?.(folder);
        const listed = workers.list(requests);
        // Awaited in turn below; one left behind by a scan that failed must not fail the process.
        listed.catch(() => undefined);
        inFlight.push({ folders, listed });
      }
      const sent = inFlight.shift();
      if (sent === undefined) break;
      let listings: Listing[] | 'late';
      try {
        listings = await this.byDeadline(sent.listed);
      } catch {
        // A worker failed: what was not compared yet is listed on this thread.
        for (const unlisted of [sent, ...inFlight]) this.folders.push(...unlisted.folders);
        return false;
      }
      // A folder a worker cannot finish listing (a hung mount) fails the scan at its deadline, not never.
      if (listings === 'late') throw new Untracked(`scanning ${this.root} took longer than its time budget`);
      sent.folders.forEach(([relative, inGit], index) => {
        const listing = (listings as Listing[])[index]!;
        if ('failed' in listing) throw new Error(listing.failed);
        if ('error' in listing) this.unreadable(relative, listing.error);
        else if ('same' in listing) this.reuse(relative, inGit, this.previousLayout!.get(relative)!);
        else this.entries(relative, inGit, listing.names, (at) => statAt(listing.stats, at, this.scratch), listing.id);
      });
    }
    this.finish();
    return true;
  }

  /** What to ask a worker of the folder `relative`: the listing its previous files came from, when they may be taken whole. */
  private request(relative: string): ListRequest {
    const folder = this.absolute(relative);
    const listed = this.previousLayout?.get(relative)?.listed;
    const whole = listed !== undefined && listed.denyKey === this.denyKey && !this.standInFolders.has(folder);
    return whole ? { folder, since: listed.id } : { folder };
  }

  private async byDeadline<T>(work: Promise<T>): Promise<T | 'late'> {
    const left = this.options.limits.deadline - Date.now();
    if (left > 2 ** 31 - 1) return work;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), Math.max(0, left))));
    try {
      return await Promise.race([work, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  private absolute(relative: string): string {
    return relative === '' ? this.root : `${this.root}/${relative}`;
  }

  private unreadable(relative: string, code: string | undefined): void {
    const stat = fs.lstatSync(this.absolute(relative), { throwIfNoEntry: false });
    if (relative !== '' && stat !== undefined) this.add(relative, special(stat, `unreadable folder (${code ?? 'error'})`));
  }

  /** A repository's HEAD and refs: what it points at, not its objects. */
  private git(relative: string): void {
    const head = `${relative}/HEAD`;
    this.options.watch?.(`${this.root}/${relative}`);
    const stat = fs.lstatSync(`${this.root}/${head}`, { throwIfNoEntry: false });
    if (stat !== undefined && !isFolder(stat)) this.file(head, stat);
    if (fs.existsSync(path.join(this.root, relative, 'refs'))) this.folders.push([`${relative}/refs`, true]);
  }

  /** Whether none, all or some of the files in the folder `absolute` are denied to the agent. */
  private denialIn(absolute: string): Denial {
    const denyRead = this.options.denyRead;
    if (denyRead.length === 0) return 'none';
    if (under(denyRead, absolute)) return 'all';
    const inside = absolute.endsWith(path.sep) ? absolute : absolute + path.sep;
    return denyRead.some((denied) => denied.startsWith(inside)) ? 'some' : 'none';
  }

  file(relative: string, stat: Stat, denial: Denial = 'some'): IndexEntry {
    this.count += 1;
    if (this.count > this.options.limits.maxFiles) throw new Untracked(`${this.root} holds more than ${this.options.limits.maxFiles} files`);
    if (this.count % CHECK_CLOCK_EVERY === 0 && Date.now() > this.options.limits.deadline) throw new Untracked(`scanning ${this.root} took longer than its time budget`);
    const known = this.previous[relative];
    const denied = denial === 'some' ? under(this.options.denyRead, this.absolute(relative)) : denial === 'all';
    if (known !== undefined && known.mtimeMs === stat.mtimeMs && known.ctimeMs === stat.ctimeMs && known.size === stat.size && known.ino === stat.ino && known.mode === stat.mode && (known.reason === 'deny-read') === denied) {
      this.reused += 1;
      this.add(relative, known);
      return known;
    }
    this.changed = true;
    const entry = this.entry(this.absolute(relative), stat, denied);
    this.add(relative, entry);
    return entry;
  }

  private entry(absolute: string, stat: Stat, denied: boolean): IndexEntry {
    const base = { size: stat.size, mode: stat.mode, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs, ino: stat.ino };
    if (isLink(stat)) {
      const target = fs.readlinkSync(absolute);
      return { ...base, kind: 'link', hash: sha256(target), target, stored: false };
    }
    if (!isFile(stat)) return special(stat, 'special file');
    if (stat.size > this.options.limits.maxFileBytes) return { ...base, kind: 'file', hash: null, stored: false, reason: `over ${this.options.limits.maxFileBytes} bytes` };
    let bytes: Buffer;
    try {
      bytes = readWhole(absolute, stat.size);
    } catch (error) {
      return { ...base, kind: 'file', hash: null, stored: false, reason: `unreadable (${(error as NodeJS.ErrnoException).code ?? 'error'})` };
    }
    const hash = sha256(bytes);
    // X1: what the agent may not read is known by hash and size; its bytes are never stored.
    if (denied) return { ...base, size: bytes.length, kind: 'file', hash, stored: false, reason: 'deny-read' };
    this.options.blobs.put(hash, bytes);
    return { ...base, size: bytes.length, kind: 'file', hash, stored: true };
  }

  private add(relative: string, entry: IndexEntry): void {
    this.keys.push(relative);
    this.entryList.push(entry);
  }
}

/** The index of `root` now and whether it differs from `previous`, whose unchanged files skip their read. A missing root is empty. */
export function scanRoot(root: string, previous: TreeIndex, options: ScanOptions): TreeIndex {
  const walk = new Walk(root, previous, options);
  walk.begin();
  walk.work(Number.POSITIVE_INFINITY);
  return walk.index;
}

/**
 * `scanRoot` off the event loop: a re-scan of a tree of some size is listed by the scan workers
 * (./stat-workers.ts); a first snapshot, a small tree, or no workers, in slices of a few
 * milliseconds with the event loop run between them. Either way a scan beside a turn leaves the
 * process answering its CLI.
 */
export async function scanRootSliced(root: string, previous: TreeIndex, options: ScanOptions, workers: FolderLister = statWorkers): Promise<{ index: TreeIndex; changed: boolean }> {
  const walk = new Walk(root, previous, options);
  walk.begin();
  if (options.unchanged === undefined && sizeOf(previous) >= WORKERS_FROM_ENTRIES && workers.size > 0 && (await walk.workOn(workers))) return { index: walk.index, changed: walk.changed };
  while (!walk.work(performance.now() + SLICE_MS)) await new Promise((resolve) => setImmediate(resolve));
  return { index: walk.index, changed: walk.changed };
}
