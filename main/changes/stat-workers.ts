/**
 * The `lstat` walk of a re-scan on worker threads (issue 26). A scan of an unchanged tree is one
 * `readdir` per folder and one `lstat` per entry, compared against the last index; on the main
 * thread that was ~110 ms for 10,000 files, and a scan runs twice a turn beside the CLI, so every
 * line the CLI streamed through Ward waited for a slice of it. Here the workers list folders and
 * return each entry's stat as numbers; the main thread keeps the comparisons, the index and the
 * reads (blobs, deny-read, links). Each folder goes to one worker (by its path), which keeps its
 * last listing of it: a folder listed the same as the listing the caller's index was made from
 * (names, order and every stat number) comes back as "same", so an unchanged folder costs the
 * main thread no names to copy and no comparison (measured: the main thread's share of a 10,000
 * file re-scan was 26 ms, nearly all of it cache misses on 10,000 entries it only had to confirm).
 * Two workers (on a machine with two cores or more), as git's status shares its `lstat`s among threads.
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

/** A folder to list, and the listing (its `id`) the caller's last index of it was made from, if it may be taken whole when nothing differs. */
export interface ListRequest {
  readonly folder: string;
  readonly since?: number;
}

/**
 * One folder as a worker saw it: the same as listing `since` (`same`); or its names in listing
 * order and their stats, as listing `id`; or the error code of its `readdir` (an unreadable
 * folder, recorded as such); or the message of an entry's `lstat` that failed otherwise than by
 * its going away (the scan fails, as on the main thread).
 */
export type Listing =
  | { readonly same: true }
  | { readonly id: number; readonly names: string[]; readonly stats: Float64Array }
  | { readonly error: string }
  | { readonly failed: string };

/** Names a worker keeps of its last listings; past it, it forgets them all (a scan then compares every folder once). */
const KEPT_NAMES = 400_000;

/** CommonJS, evaluated in each worker (workerData: its number and how many there are, so listing ids are unique). */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const kept = new Map();
let keptNames = 0;
let next = 0;
function sameAs(last, names, stats) {
  if (last.names.length !== names.length) return false;
  for (let index = 0; index < names.length; index += 1) if (last.names[index] !== names[index]) return false;
  for (let index = 0; index < stats.length; index += 1) if (last.stats[index] !== stats[index]) return false;
  return true;
}
parentPort.on('message', ({ id, requests }) => {
  const listings = [];
  const buffers = [];
  for (const { folder, since } of requests) {
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
    const last = kept.get(folder);
    // A listing the same as the last keeps its id, whoever asks: scans against other indexes of the folder do not undo each other.
    if (last !== undefined && sameAs(last, names, stats)) {
      if (last.id === since) {
        listings.push({ same: true });
        continue;
      }
      listings.push({ id: last.id, names, stats });
      buffers.push(stats.buffer);
      continue;
    }
    const listing = next++ * workerData.count + workerData.index;
    if (last !== undefined) keptNames -= last.names.length;
    if (keptNames + names.length > ${KEPT_NAMES}) { kept.clear(); keptNames = 0; }
    kept.set(folder, { id: listing, names, stats: stats.slice() });
    keptNames += names.length;
    listings.push({ id: listing, names, stats });
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

  constructor(index: number, count: number, private readonly onBroken: () => void) {
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { index, count } });
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

  list(requests: readonly ListRequest[]): Promise<Listing[]> {
    const id = this.next++;
    // Referenced while it works: a scan awaiting it keeps the process up.
    this.worker.ref();
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, requests });
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
  list(requests: readonly ListRequest[]): Promise<Listing[]>;
}

/** Which of `count` workers lists `folder`: always the same one, the one that kept its last listing. */
function workerOf(folder: string, count: number): number {
  let hash = 2166136261;
  for (let index = 0; index < folder.length; index += 1) hash = Math.imul(hash ^ folder.charCodeAt(index), 16777619);
  return (hash >>> 0) % count;
}

export class StatWorkers implements FolderLister {
  private workers: StatWorker[] | null | undefined;

  /** The folders' listings, in order, each by its worker; rejects when a worker fails (the caller lists on its own thread then). */
  async list(requests: readonly ListRequest[]): Promise<Listing[]> {
    const workers = this.start();
    if (workers === null) throw new Error('no scan worker can run here');
    const shares = workers.map((): { readonly at: number[]; readonly requests: ListRequest[] } => ({ at: [], requests: [] }));
    requests.forEach((request, at) => {
      const share = shares[workerOf(request.folder, workers.length)]!;
      share.at.push(at);
      share.requests.push(request);
    });
    const listed = await Promise.all(shares.map((share, index) => (share.requests.length === 0 ? [] : workers[index]!.list(share.requests))));
    const listings: Listing[] = new Array(requests.length);
    shares.forEach((share, index) => share.at.forEach((at, position) => (listings[at] = listed[index]![position]!)));
    return listings;
  }

  /** How many workers list at once (0: none can run here). */
  get size(): number {
    return this.start()?.length ?? 0;
  }

  private start(): StatWorker[] | null {
    if (this.workers !== undefined) return this.workers;
    try {
      const count = Math.max(1, Math.min(2, os.availableParallelism()));
      this.workers = Array.from({ length: count }, (_, index) => new StatWorker(index, count, () => this.broken()));
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
