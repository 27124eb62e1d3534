/**
 * The `lstat` walk of a re-scan on worker threads (issue 26). A scan of an unchanged tree is one
 * `readdir` per folder and one `lstat` per entry, compared against the last index; on the main
 * thread that was ~110 ms for 10,000 files, and a scan runs twice a turn beside the CLI, so every
 * line the CLI streamed through Ward waited for a slice of it. Here the workers list folders and
 * return each entry's stat as numbers; the main thread keeps the comparisons, the index and the
 * reads (blobs, deny-read, links), so what it does per file is a few number comparisons. Two
 * workers (on a machine with two cores or more) take the folders a few at a time, each list going
 * to the less busy one, as git's status shares its `lstat`s among threads.
 *
 * A worker that cannot start or dies makes the pool unusable; the scan goes on on the main thread.
 * Workers never keep the process alive while idle.
 */
import type fs from 'node:fs';
import os from 'node:os';
import { Worker } from 'node:worker_threads';

/** Numbers per entry in a listing's `stats`: mode, size, inode, mtime, ctime (ms); mode -1 when the entry went away before its lstat. */
const STAT_FIELDS = 5;

/** What a scan reads of an entry's stat: fs.Stats has it, and so does a listing. */
export type Stat = Pick<fs.Stats, 'mode' | 'size' | 'ino' | 'mtimeMs' | 'ctimeMs'>;

/** Entry `index` of a listing's `stats`, in `into`; undefined when it went away before its lstat. */
export function statAt(stats: Float64Array, index: number, into: { -readonly [K in keyof Stat]: Stat[K] }): Stat | undefined {
  const at = index * STAT_FIELDS;
  if (stats[at]! < 0) return undefined;
  into.mode = stats[at]!;
  into.size = stats[at + 1]!;
  into.ino = stats[at + 2]!;
  into.mtimeMs = stats[at + 3]!;
  into.ctimeMs = stats[at + 4]!;
  return into;
}

/**
 * One folder as a worker saw it: its names in listing order and their stats; or the error code
 * of its `readdir` (an unreadable folder, recorded as such); or the message of an entry's
 * `lstat` that failed otherwise than by its going away (the scan fails, as on the main thread).
 */
export type Listing = { readonly names: string[]; readonly stats: Float64Array } | { readonly error: string } | { readonly failed: string };

/** CommonJS, evaluated in each worker. */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const fs = require('node:fs');
parentPort.on('message', ({ id, folders }) => {
  const listings = [];
  const buffers = [];
  for (const folder of folders) {
    let names;
    try {
      names = fs.readdirSync(folder);
    } catch (error) {
      listings.push({ error: (error && error.code) || 'error' });
      continue;
    }
    const stats = new Float64Array(names.length * ${STAT_FIELDS});
    try {
      for (let index = 0; index < names.length; index += 1) {
        const stat = fs.lstatSync(folder + '/' + names[index], { throwIfNoEntry: false });
        const at = index * ${STAT_FIELDS};
        if (stat === undefined) { stats[at] = -1; continue; }
        stats[at] = stat.mode; stats[at + 1] = stat.size; stats[at + 2] = stat.ino; stats[at + 3] = stat.mtimeMs; stats[at + 4] = stat.ctimeMs;
      }
    } catch (error) {
      listings.push({ failed: String((error && error.message) || error) });
      continue;
    }
    listings.push({ names, stats });
    buffers.push(stats.buffer);
  }
  parentPort.postMessage({ id, listings }, buffers);
});
`;

interface Pending {
  readonly resolve: (listings: Listing[]) => void;
  readonly reject: (error: Error) => void;
}

class StatWorker {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private next = 0;

  constructor(private readonly onBroken: () => void) {
    this.worker = new Worker(WORKER_SOURCE, { eval: true });
    this.worker.unref();
    this.worker.on('message', ({ id, listings }: { id: number; listings: Listing[] }) => {
      const waiting = this.pending.get(id);
      this.pending.delete(id);
      if (this.pending.size === 0) this.worker.unref();
      waiting?.resolve(listings);
    });
    const fail = (error: Error): void => {
      this.onBroken();
      for (const waiting of this.pending.values()) waiting.reject(error);
      this.pending.clear();
    };
    this.worker.once('error', fail);
    this.worker.once('exit', (code) => fail(new Error(`a scan worker exited (code ${code})`)));
  }

  get waiting(): number {
    return this.pending.size;
  }

  list(folders: readonly string[]): Promise<Listing[]> {
    const id = this.next++;
    // Referenced while it works: a scan awaiting it keeps the process up.
    this.worker.ref();
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, folders });
    });
  }

  terminate(): void {
    void this.worker.terminate();
  }
}

/** What a scan needs of the workers (a test may stand in a failing one). */
export interface FolderLister {
  /** How many list at once (0: none can run here). */
  readonly size: number;
  list(folders: readonly string[]): Promise<Listing[]>;
}

export class StatWorkers implements FolderLister {
  private workers: StatWorker[] | null | undefined;

  /** The folders' listings, in order, by the least busy worker; rejects when a worker fails (the caller lists on its own thread then). */
  list(folders: readonly string[]): Promise<Listing[]> {
    const workers = this.start();
    if (workers === null) return Promise.reject(new Error('no scan worker can run here'));
    const idlest = workers.reduce((best, worker) => (worker.waiting < best.waiting ? worker : best));
    return idlest.list(folders);
  }

  /** How many workers list at once (0: none can run here). */
  get size(): number {
    return this.start()?.length ?? 0;
  }

  private start(): StatWorker[] | null {
    if (this.workers !== undefined) return this.workers;
    try {
      const count = Math.max(1, Math.min(2, os.availableParallelism()));
      this.workers = Array.from({ length: count }, () => new StatWorker(() => this.broken()));
    } catch {
      this.workers = null;
    }
    return this.workers;
  }

  private broken(): void {
    const workers = this.workers;
    this.workers = null;
    workers?.forEach((worker) => worker.terminate());
  }
}

/** The process's scan workers, shared by every scan. */
export const statWorkers = new StatWorkers();
