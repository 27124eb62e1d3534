/**
 * Issue 29: the built-in denies' ripgrep scan of a folder (./built-in-denies.ts, and the runtime's
 * own of its working directory) is kept and reused while the folder's tree is what it was.
 *
 * What the scan finds follows from the tree alone, to its depth: which names are there, of which
 * kind, in which folder (ripgrep lists files by name, reads no content and, with --no-ignore
 * --no-config, no ignore file), and whether the top `.git` is a folder. So a scan is kept under a
 * digest of exactly that (every folder down to the scan's depth, read in full), with its finds
 * relative to the folder, and reused when the digest is the same again: a new nested `.git` or
 * `.env`-like file anywhere within the depth changes the digest; stand-ins the runtime made and
 * removed again do not. A folder that cannot be read, or with more than MAX_FOLDERS folders
 * within the depth, is scanned every time, as before.
 *
 * A scan is kept only if the tree did not change while it ran: the folders' change times
 * (ctime, which any entry added, removed or renamed and any mode change move forward) are the
 * same after the scan as before it, and all older than the scan's start by more than the
 * clock's coarse step, so a change during the scan cannot leave the same time behind.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** Past this many folders within the depth, walking costs about what ripgrep does: not kept. */
const MAX_FOLDERS = 2_000;
/** Kept scans, newest first; older ones are dropped. */
const MAX_KEPT = 64;
/** The kernel stamps change times from a clock that lags by up to one tick (10 ms at HZ=100). */
const CLOCK_STEP_MS = 20;
/** ripgrep is killed after 10 s with a partial list (the runtime keeps what it had): such a scan is not kept. */
const SLOW_SCAN_MS = 5_000;

/** What else a scan's finds depend on (its depth, whether git config may be written, the ripgrep command). */
export interface ScanVariant {
  readonly depth: number;
  readonly allowGitConfig: boolean;
  /** The runtime's ripgrep setting; undefined is its default, `rg`. */
  readonly ripgrep: unknown;
}

interface Tree {
  /** Names, kinds and places of everything within the depth: what the scan's finds follow from. */
  readonly digest: string;
  /** The folders' change times: equal before and after, nothing changed while the scan ran. */
  readonly stamp: string;
  /** The newest change time of a folder. */
  readonly newest: number;
}

interface Kept {
  readonly digest: string;
  /** Relative to the scanned folder. */
  readonly paths: readonly string[];
}

export class DenyScanCache {
  private kept: Kept[] | undefined;

  /** `file`: where kept scans are written, in Ward's data folder (no run sees it), or null for this process only. */
  constructor(private readonly file: string | null) {}

  /** What `scan` finds in `folder`, from a kept scan of the same tree when there is one. */
  async scan(folder: string, variant: ScanVariant, scan: (folder: string) => Promise<string[]>): Promise<string[]> {
    const started = Date.now();
    const before = treeOf(folder, variant);
    const hit = before === null ? undefined : this.load().find((kept) => kept.digest === before.digest);
    if (hit !== undefined) return hit.paths.map((relative) => path.join(folder, relative));
    const found = await scan(folder);
    if (before === null || before.newest >= started - CLOCK_STEP_MS || Date.now() - started > SLOW_SCAN_MS) return found;
    const after = treeOf(folder, variant);
    const relative = found.map((denied) => path.relative(folder, denied));
    if (after?.stamp !== before.stamp || relative.some((denied) => denied.startsWith('..') || path.isAbsolute(denied))) return found;
    this.keep({ digest: before.digest, paths: relative });
    return found;
  }

  private load(): Kept[] {
    if (this.kept !== undefined) return this.kept;
    this.kept = [];
    if (this.file === null) return this.kept;
    try {
      const parsed: unknown = JSON.parse(fs.readFileSync(this.file, 'utf8'));
      if (Array.isArray(parsed)) this.kept = parsed.filter(isKept).slice(0, MAX_KEPT);
    } catch {
      // None yet, or not readable as kept scans: each folder is scanned again.
    }
    return this.kept;
  }

  private keep(entry: Kept): void {
    this.kept = [entry, ...this.load().filter((kept) => kept.digest !== entry.digest)].slice(0, MAX_KEPT);
    if (this.file === null) return;
    try {
      fs.mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
      const temporary = `${this.file}.${process.pid}`;
      fs.writeFileSync(temporary, JSON.stringify(this.kept), { mode: 0o600 });
      fs.renameSync(temporary, this.file);
    } catch {
      // Not written: the next process scans again.
    }
  }
}

function isKept(value: unknown): value is Kept {
  const kept = value as Kept | null;
  return typeof kept?.digest === 'string' && Array.isArray(kept.paths) && kept.paths.every((denied) => typeof denied === 'string');
}

/** The folder's tree down to the scan's depth, or null when it cannot be read whole or is too large. */
function treeOf(folder: string, variant: ScanVariant): Tree | null {
  const digest = createHash('sha256').update(JSON.stringify([variant.depth, variant.allowGitConfig, variant.ripgrep ?? { command: 'rg' }, topGitKind(folder)]));
  const stamp: string[] = [];
  let newest = 0;
  // ripgrep lists entries down to depth + 1, so it reads every folder down to `depth`.
  const queue: [string, number][] = [['', 0]];
  for (let next = 0; next < queue.length; next++) {
    if (next >= MAX_FOLDERS) return null;
    const [relative, level] = queue[next]!;
    const dir = path.join(folder, relative);
    let entries: fs.Dirent[];
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(dir);
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return null;
    }
    stamp.push(`${stat.ino}:${stat.ctimeMs}:${stat.mode}:${stat.uid}`);
    newest = Math.max(newest, stat.ctimeMs);
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    // A name holds neither NUL nor '/': the encoding is unambiguous.
    digest.update(`${relative}\0${stat.mode}:${stat.uid}\0`);
    for (const entry of entries) {
      digest.update(`${kindOf(entry)}${entry.name}\0`);
      if (entry.isDirectory() && level < variant.depth) queue.push([path.join(relative, entry.name), level + 1]);
    }
    digest.update('\n');
  }
  return { digest: digest.digest('hex'), stamp: stamp.join(' '), newest };
}

function kindOf(entry: fs.Dirent): string {
  if (entry.isDirectory()) return 'd';
  if (entry.isFile()) return 'f';
  if (entry.isSymbolicLink()) return 'l';
  return 'o';
}

/** The runtime asks whether the top `.git` is a folder through links (stat, not lstat). */
function topGitKind(folder: string): string {
  try {
    const stat = fs.statSync(path.join(folder, '.git'), { throwIfNoEntry: false });
    return stat === undefined ? 'absent' : stat.isDirectory() ? 'folder' : 'other';
  } catch {
    return 'unreadable';
  }
}
