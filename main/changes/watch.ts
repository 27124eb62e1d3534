/**
 * Whether anything changed in the folders a scan read since it read them (the end scan of a turn
 * runs while the CLI exits, X1). Each folder is watched (inotify, through `fs.watch`) before it is
 * read: a change before the watch is in what the scan read, a change after it is an event. All
 * watches share the event loop's one inotify queue, in order: once a file written after the
 * agent's last process is gone is heard of (`settled`), every event before it was heard too. A
 * folder that cannot be watched, too many folders, or any event, and the scan is not to be trusted
 * (`quiet` false): the caller scans again. inotify does not see writes through a shared memory
 * mapping; a file so changed after the scan is found by the next scan (a change between turns).
 */
import fs from 'node:fs';
import path from 'node:path';
import { isProcessAlive } from '../base/process.js';

/** More folders than this and the watch gives up (inotify's per-user watch limit is shared with every other program). */
const MAX_WATCHED_FOLDERS = 20_000;
/** How long the event that closes the watch may take to arrive before the watch gives up. */
const SETTLE_MS = 2_000;

export class TreeWatch {
  private readonly watchers: fs.FSWatcher[] = [];
  private readonly watched = new Set<string>();
  private changed = false;
  private closed = false;

  /**
   * `barriers`: a folder of Ward's own where the watch writes the file that closes it
   * (ChangeStore.barrierDir); `standIns`: the sandbox's empty files (../sandbox/built-in-denies.ts).
   */
  constructor(
    private readonly barriers: string,
    private readonly standIns: ReadonlySet<string>,
  ) {}

  /** Whether nothing changed since each folder was watched (so far). */
  get quiet(): boolean {
    return !this.changed;
  }

  /** Called before the scan reads `absolute` (a folder, or a root that is one file). */
  watch(absolute: string): void {
    // A stand-in folder is the sandbox's, and goes as the sandbox ends: its folder hears of that.
    if (this.changed || this.closed || this.watched.has(absolute) || this.standIns.has(absolute)) return;
    if (this.watched.size >= MAX_WATCHED_FOLDERS) {
      this.changed = true;
      return;
    }
    this.watched.add(absolute);
    try {
      const watcher = fs.watch(absolute, { persistent: false }, (_event, name) => {
        // The sandbox removes its own stand-ins as it ends: no change of the agent's.
        if (name === null || !this.standIns.has(path.join(absolute, name))) this.changed = true;
      });
      watcher.on('error', () => (this.changed = true));
      this.watchers.push(watcher);
    } catch {
      // Gone, unreadable, or out of watches: not known to stay the same.
      this.changed = true;
    }
  }

  /**
   * Once nothing of the agent's runs any more: whether any change came after the scan read its
   * folders. Writes a file of its own and waits (bounded) for its event, which inotify queues after
   * every earlier one. Closes the watch.
   */
  async settled(): Promise<boolean> {
    try {
      if (!this.changed) await this.barrier();
    } catch {
      this.changed = true;
    } finally {
      this.close();
    }
    return !this.changed;
  }

  private async barrier(): Promise<void> {
    fs.mkdirSync(this.barriers, { recursive: true, mode: 0o700 });
    const file = path.join(this.barriers, `${process.pid}-${Math.random().toString(36).slice(2)}`);
    let heard: () => void = () => undefined;
    const arrived = new Promise<boolean>((resolve) => (heard = () => resolve(true)));
    const watcher = fs.watch(this.barriers, { persistent: false }, (_event, name) => {
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

  close(): void {
    this.closed = true;
    for (const watcher of this.watchers.splice(0)) watcher.close();
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
