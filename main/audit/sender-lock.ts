/**
 * One background audit sender per data folder (issue 28): a lock file holding the sender's pid,
 * its mtime refreshed while it runs. Taken with O_EXCL, so of two senders started at once one
 * runs and the other exits. A lock whose process is gone (or whose pid now names another process),
 * or that was not refreshed for a minute (a frozen sender), is stale and taken over: a crashed
 * sender never blocks delivery.
 */
import fs from 'node:fs';
import path from 'node:path';
import { isProcessAlive, processIdentity } from '../base/process.js';

const LOCK_FILE = 'audit-sender.lock';
/** Refreshed this often by the holder… */
const LOCK_REFRESH_MS = 10_000;
/** …and stale when older than this. */
const STALE_MS = 60_000;

export interface SenderLockInfo {
  readonly pid: number;
  /** The process's start time where the OS tells it: a reused pid is not the sender. */
  readonly identity?: string | null;
  readonly since: string;
}

function lockPath(home: string): string {
  return path.join(home, LOCK_FILE);
}

/** The running sender, or null when there is none (no lock, or a stale one). */
export function runningSender(home: string, now = Date.now()): SenderLockInfo | null {
  let text: string;
  let mtimeMs: number;
  try {
    mtimeMs = fs.statSync(lockPath(home)).mtimeMs;
    text = fs.readFileSync(lockPath(home), 'utf8');
  } catch {
    return null;
  }
  let info: SenderLockInfo;
  try {
    info = JSON.parse(text) as SenderLockInfo;
  } catch {
    // Being written right now (created, not yet filled): fresh, so count it as running.
    return now - mtimeMs < STALE_MS ? { pid: 0, since: new Date(mtimeMs).toISOString() } : null;
  }
  if (!Number.isSafeInteger(info.pid) || info.pid <= 0) return null;
  return now - mtimeMs < STALE_MS && isProcessAlive(info.pid, info.identity ?? null) ? info : null;
}

export class SenderLock {
  private readonly timer: NodeJS.Timeout;

  private constructor(private readonly file: string) {
    this.timer = setInterval(() => this.refresh(), LOCK_REFRESH_MS);
    this.timer.unref();
  }

  /** Takes the data folder's sender lock; null when another live sender holds it. */
  static acquire(home: string): SenderLock | null {
    const file = lockPath(home);
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const fd = fs.openSync(file, 'wx', 0o600);
        try {
          fs.writeSync(fd, JSON.stringify({ pid: process.pid, identity: processIdentity(process.pid), since: new Date().toISOString() } satisfies SenderLockInfo));
        } finally {
          fs.closeSync(fd);
        }
        return new SenderLock(file);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        if (runningSender(home) !== null) return null;
        // Stale: taken over. Two takers racing here both unlink, and O_EXCL lets one of them in.
        fs.rmSync(file, { force: true });
      }
    }
    return null;
  }

  private refresh(): void {
    const now = new Date();
    try {
      fs.utimesSync(this.file, now, now);
    } catch {
      // Removed under us (a taker thought it stale): the next sender's lock is not ours to touch.
    }
  }

  /** Gives the lock up, if it is still this process's. */
  release(): void {
    clearInterval(this.timer);
    try {
      const info = JSON.parse(fs.readFileSync(this.file, 'utf8')) as SenderLockInfo;
      if (info.pid === process.pid) fs.rmSync(this.file, { force: true });
    } catch {
      // Already gone.
    }
  }
}
