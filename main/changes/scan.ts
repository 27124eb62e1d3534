/**
 * A writable root's state as an index of path → entry, git-index style: an entry whose size,
 * mtime, ctime, inode and mode are what the previous index says keeps its hash without a read,
 * so an unchanged tree costs one `lstat` walk. Regular files are hashed and their bytes stored as
 * blobs, unless the agent may not read them (deny-read: hash and size only), they are over the
 * size cap or unreadable (metadata and a reason). Symlinks are recorded by their target, never
 * followed; other special files by metadata. Inside `.git/` only HEAD and refs are recorded.
 * Synchronous on purpose (one `lstat` per path, as git's own status does) and bounded by a file
 * count and a deadline: past either the scan throws `Untracked` and the run goes on untracked.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FileState } from '../../common/events.js';
import { sha256, type BlobStore } from './blobs.js';

export interface IndexEntry extends FileState {
  readonly mtimeMs: number;
  readonly ctimeMs: number;
  readonly ino: number;
}

/** Relative path (with `/`) → entry. */
export type TreeIndex = Record<string, IndexEntry>;

export interface ScanLimits {
  /** More files than this in one root: the run is not tracked (default 200,000). */
  readonly maxFiles: number;
  /** A file bigger than this is recorded by metadata only (default 10 MB). */
  readonly maxFileBytes: number;
  /** When the scan must have ended (Date.now() milliseconds). */
  readonly deadline: number;
}

/**
 * The scan runs on the turn's path, before the CLI starts and after it ends, and (for now) on the
 * process's one thread: its budget is what a person waits at most for tracking, so it is short.
 */
export const DEFAULT_SCAN_LIMITS = { maxFiles: 200_000, maxFileBytes: 10 * 1024 * 1024, budgetMs: 5_000 } as const;

/** Why a run's changes are not tracked. */
export class Untracked extends Error {}

export interface ScanOptions {
  readonly blobs: BlobStore;
  readonly limits: ScanLimits;
  /** Whether the agent may not read this absolute path: its bytes are never stored. */
  readonly denyRead: (absolute: string) => boolean;
}

const CHECK_CLOCK_EVERY = 256;

class Walk {
  readonly index: TreeIndex = {};
  private count = 0;

  constructor(
    private readonly root: string,
    private readonly previous: TreeIndex,
    private readonly options: ScanOptions,
  ) {}

  directory(relative: string, inGit: boolean): void {
    const absolute = relative === '' ? this.root : `${this.root}/${relative}`;
    let names: fs.Dirent[];
    try {
      names = fs.readdirSync(absolute, { withFileTypes: true });
    } catch (error) {
      if (relative !== '') this.add(relative, special(fs.lstatSync(absolute), `unreadable folder (${(error as NodeJS.ErrnoException).code ?? 'error'})`));
      return;
    }
    for (const dirent of names) {
      const child = relative === '' ? dirent.name : `${relative}/${dirent.name}`;
      if (dirent.isDirectory()) {
        if (!inGit && dirent.name === '.git') this.git(child);
        else this.directory(child, inGit);
      } else this.file(child);
    }
  }

  /** A repository's HEAD and refs: what it points at, not its objects. */
  private git(relative: string): void {
    const head = `${relative}/HEAD`;
    if (fs.existsSync(path.join(this.root, head))) this.file(head);
    const refs = path.join(this.root, relative, 'refs');
    if (fs.existsSync(refs)) this.directory(`${relative}/refs`, true);
  }

  file(relative: string): void {
    this.count += 1;
    if (this.count > this.options.limits.maxFiles) throw new Untracked(`${this.root} holds more than ${this.options.limits.maxFiles} files`);
    if (this.count % CHECK_CLOCK_EVERY === 0 && Date.now() > this.options.limits.deadline) throw new Untracked(`scanning ${this.root} took longer than its time budget`);
    const absolute = relative === '' ? this.root : `${this.root}/${relative}`;
    const stat = fs.lstatSync(absolute);
    const known = this.previous[relative];
    const denied = this.options.denyRead(absolute);
    if (known !== undefined && (known.reason === 'deny-read') === denied && known.size === stat.size && known.mtimeMs === stat.mtimeMs && known.ctimeMs === stat.ctimeMs && known.ino === stat.ino && known.mode === stat.mode) {
      this.add(relative, known);
      return;
    }
    this.add(relative, this.entry(absolute, stat, denied));
  }

  private entry(absolute: string, stat: fs.Stats, denied: boolean): IndexEntry {
    const base = { size: stat.size, mode: stat.mode, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs, ino: stat.ino };
    if (stat.isSymbolicLink()) {
      const target = fs.readlinkSync(absolute);
      return { ...base, kind: 'link', hash: sha256(target), target, stored: false };
    }
    if (!stat.isFile()) return special(stat, 'special file');
    if (stat.size > this.options.limits.maxFileBytes) return { ...base, kind: 'file', hash: null, stored: false, reason: `over ${this.options.limits.maxFileBytes} bytes` };
    let bytes: Buffer;
    try {
      bytes = fs.readFileSync(absolute);
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
    this.index[relative] = entry;
  }
}

function special(stat: fs.Stats, reason: string): IndexEntry {
  return { kind: 'special', size: stat.size, mode: stat.mode, hash: null, stored: false, reason, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs, ino: stat.ino };
}

/** The index of `root` now; `previous` lets unchanged files skip their read. A missing root is empty. */
export function scanRoot(root: string, previous: TreeIndex, options: ScanOptions): TreeIndex {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(root);
  } catch {
    return {};
  }
  const walk = new Walk(root, previous, options);
  // A write grant may name one file: its one entry has the empty path.
  if (stat.isDirectory()) walk.directory('', false);
  else walk.file('');
  return walk.index;
}

/** A path's state as journaled: the index entry without its stat cache. */
export function stateOf(entry: IndexEntry): FileState {
  const { mtimeMs: _m, ctimeMs: _c, ino: _i, ...state } = entry;
  return state;
}
