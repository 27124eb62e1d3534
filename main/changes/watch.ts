/**
 * Whether anything changed in the folders a scan read since it read them (the end scan of a turn
 * runs while the CLI exits, X1). Each folder is watched (inotify, through `fs.watch`) before it is
 * read: a change before the watch is in what the scan read, a change after it is an event. All
 * watches share the event loop's one inotify queue, in order: once a file written after the
 * agent's last process is gone is heard of (`settled`), every event before it was heard too. A
 * folder that cannot be watched, too many folders, any event, or a queue that may have overflowed,
 * and the scan is not to be trusted (`quiet` false): the caller scans again. A recording watch
 * (made so, or kept past its turn by `settled(true)`) instead remembers where it heard changes:
 * the next scan reads only those folders and takes every other from the index (git's fsmonitor),
 * on Linux only (inotify's ordering and overflow are what it relies on; elsewhere a scan reads
 * every folder). inotify does not see writes through a shared memory mapping, nor a write through
 * a hard link outside the watched folders: a file so changed is found by the next scan that reads
 * its folder.
 */
import fs from 'node:fs';
import path from 'node:path';
import { isProcessAlive } from '../base/process.js';

/** More folders than this and the watch gives up (inotify's per-user watch limit is shared with every other program). */
const MAX_WATCHED_FOLDERS = 20_000;
/** How long the event that closes the watch may take to arrive before the watch gives up. */
const SETTLE_MS = 2_000;
/** Paths a recording watch remembers hearing of between two scans; more and it gives up (every folder is read). */
const MAX_HEARD = 10_000;

/**
 * Past its queue's length (max_queued_events) inotify drops events, and libuv drops the overflow
 * notice: so once the watches of this process heard half a queue's worth since a watch began or
 * last checked (another run's tree in this process may be the busy one), it cannot say what it may
 * have missed (a queue that overflowed was delivered whole first).
 */
const OVERFLOW_BOUND = Math.floor(queueLength() / 2);
/** Where a watch may record (inotify's ordering and overflow are what recording relies on). */
const RECORDS = process.platform === 'linux';
/** Every event the watches of this process heard (they share the event loop's one inotify queue). */
let eventsHeard = 0;

function queueLength(): number {
  try {
    const length = Number(fs.readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8').trim());
    return Number.isSafeInteger(length) && length > 0 ? length : 16_384;
  } catch {
    return 16_384;
  }
}

export class TreeWatch {
  /**
   * Each folder watched, by path, and the `changedFolders` call it was watched before (a folder
   * heard of is watched again before its next read: it may be another folder by now).
   */
  private readonly watchers = new Map<string, { watcher: fs.FSWatcher | null; readonly since: number }>();
  private checks = 0;
  private eventsAtCheck = eventsHeard;
  private changed = false;
  private closed = false;
  /** Recording (`recording`, or kept by `settled(true)`): the paths heard of since the last `changedFolders`. */
  private heard: Set<string> | null = null;

  /**
   * `barriers`: a folder of Ward's own where the watch writes the file that closes it
   * (ChangeStore.barrierDir); `standIns`: the sandbox's empty files (../sandbox/built-in-denies.ts).
   */
  constructor(
    private readonly barriers: string,
    private readonly standIns: ReadonlySet<string>,
  ) {}

  /** A watch that records what it hears, to say which folders a scan must read again (`changedFolders`). */
  static recording(barriers: string): TreeWatch {
    const watch = new TreeWatch(barriers, new Set());
    if (RECORDS) watch.heard = new Set();
    return watch;
  }

  /** Whether nothing changed since each folder was watched (so far), or, recording, whether it can still say what did. */
  get quiet(): boolean {
    return !this.changed;
  }

  /** Called before the scan reads `absolute` (a folder, or a root that is one file). */
  watch(absolute: string): void {
    // A stand-in folder is the sandbox's, and goes as the sandbox ends: its folder hears of that.
    if (this.changed || this.closed || this.watchers.has(absolute) || this.standIns.has(absolute)) return;
    if (this.watchers.size >= MAX_WATCHED_FOLDERS) {
      this.changed = true;
      return;
    }
    const watched = { watcher: null as fs.FSWatcher | null, since: this.checks };
    this.watchers.set(absolute, watched);
    try {
      watched.watcher = fs.watch(absolute, { persistent: false }, (_event, name) => {
        eventsHeard += 1;
        if (name === null) this.changed = true;
        else if (this.heard !== null) this.hear(path.join(absolute, name));
        // The sandbox removes its own stand-ins as it ends: no change of the agent's.
        else if (!this.standIns.has(path.join(absolute, name))) this.changed = true;
      });
      watched.watcher.on('error', () => (this.changed = true));
    } catch {
      // Gone, unreadable, or out of watches: not known to stay the same.
      this.changed = true;
    }
  }

  private hear(absolute: string): void {
    if (this.heard!.size >= MAX_HEARD) this.changed = true;
    else this.heard!.add(absolute);
  }

  /**
   * Recording: the folders where anything changed since the last call (every event queued so far
   * heard first, as `settled` waits), each to be watched anew before its read; null when the
   * watch cannot say (it gave up, or never recorded): every folder must be read.
   */
  async changedFolders(): Promise<Set<string> | null> {
    if (this.heard === null || this.closed) return null;
    try {
      if (!this.changed) await this.barrier();
    } catch {
      this.changed = true;
    }
    this.checkOverflow();
    this.checks += 1;
    if (this.changed) return null;
    const folders = new Set([...this.heard].map((heard) => path.dirname(heard)));
    this.heard = new Set();
    // Unwatched, so not `unchanged` in the scan that follows, which watches each anew before its read.
    for (const folder of folders) {
      this.watchers.get(folder)?.watcher?.close();
      this.watchers.delete(folder);
    }
    return folders;
  }

  /** Whether `absolute` (a folder) was watched before the last `changedFolders` and nothing was heard there. */
  unchanged(absolute: string): boolean {
    const watched = this.watchers.get(absolute);
    return !this.changed && watched?.watcher != null && watched.since < this.checks;
  }

  /**
   * Once nothing of the agent's runs any more: whether any change came after the scan read its
   * folders. Writes a file of its own and waits (bounded) for its event, which inotify queues after
   * every earlier one. Closes the watch, unless `keep` and it is quiet: it then goes on, recording.
   */
  async settled(keep = false): Promise<boolean> {
    try {
      if (!this.changed) await this.barrier();
    } catch {
      this.changed = true;
    }
    this.checkOverflow();
    if (keep && !this.changed && RECORDS) this.heard = new Set();
    else this.close();
    return !this.changed;
  }

  /** Gives up when the queue may have overflowed since the last check (OVERFLOW_BOUND). */
  private checkOverflow(): void {
    if (eventsHeard - this.eventsAtCheck >= OVERFLOW_BOUND) this.changed = true;
    this.eventsAtCheck = eventsHeard;
  }

  private async barrier(): Promise<void> {
    fs.mkdirSync(this.barriers, { recursive: true, mode: 0o700 });
    const file = path.join(this.barriers, `${process.pid}-${Math.random().toString(36).slice(2)}`);
    let heard: () => void = () => undefined;
    const arrived = new Promise<boolean>((resolve) => (heard = () => resolve(true)));
    const watcher = fs.watch(this.barriers, { persistent: false }, (_event, name) => {
      eventsHeard += 1;
      if (name === path.basename(file)) heard();
    });
    let timer: NodeJS.Timeout | undefined;
    try {
      fs.writeFileSync(file, '');
      const timedOut = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), SETTLE_MS)));
      if (!(await Promise.race([arrived, timedOut]))) this.changed = true;
    } finally {
      clearTimeout(timer);
      watcher.close();
      fs.rmSync(file, { force: true });
    }
  }

  /** Every folder unwatched and nothing heard: the next scan reads and watches every folder again. */
  restart(): void {
    this.close();
    this.closed = false;
    this.changed = false;
    if (this.heard !== null) this.heard = new Set();
    this.eventsAtCheck = eventsHeard;
  }

  close(): void {
    this.closed = true;
    for (const { watcher } of this.watchers.values()) watcher?.close();
    this.watchers.clear();
  }
}

/** The files a process killed while it waited on a watch left in `barriers`. */
export function sweepBarriers(barriers: string): void {
  let names: string[];
  try {
    names = fs.readdirSync(barriers);
  } catch {
    return;
  }
  for (const name of names) {
    const owner = /^(\d{1,10})-/.exec(name);
    if (owner !== null && Number(owner[1]) !== process.pid && !isProcessAlive(Number(owner[1]))) fs.rmSync(path.join(barriers, name), { force: true });
  }
}
