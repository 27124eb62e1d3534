import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { WardError } from '../base/errors.js';
import { isProcessAlive } from '../base/process.js';
import { shortHash } from './secret-store.js';

export interface LockOptions {
  /** How long to wait for another holder before giving up (bounded wait). */
  timeoutMs?: number;
}

export const LOCK_TIMEOUT_MS = 15_000;

interface LockRecord {
  pid: number;
  host: string;
  /** Random, so release can tell its own record from a successor's; not a credential. */
  nonce: string;
  since: string;
}

/** Every hold is bounded by request timeouts far below this; an older record is left over from a reused pid. */
const MAX_HOLD_MS = 10 * 60_000;

/** One hold of a lock by this process; async work started inside it carries it along. */
interface Hold {
  released: boolean;
  /** Re-entrant uses still running: the hold lasts until they are done. */
  readonly nested: Set<Promise<unknown>>;
}

/** Locks this async call chain holds, so nested use of the same lock does not deadlock. */
const held = new AsyncLocalStorage<ReadonlyMap<string, Hold>>();
/** In-process queue per lock file: the file lock alone cannot order two callers of one process fairly. */
const local = new Map<string, Promise<void>>();

/** A lock file's text, and its record when the text parses. */
interface Found {
  raw: string;
  record: LockRecord | undefined;
}

function readRecord(file: string): Found | undefined {
  let raw: string;
  try {
    raw = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    return { raw, record: JSON.parse(raw) as LockRecord };
  } catch {
    return { raw, record: undefined };
  }
}

/**
 * A lock file left by a process that no longer runs on this machine, or older than any hold
 * can last. A record we cannot parse
 * counts as stale only once it is old enough that its writer cannot still be filling it in.
 */
function isStale(file: string, found: Found): boolean {
  if (found.record === undefined) {
    try {
      return Date.now() - fs.statSync(file).mtimeMs > 5_000;
    } catch {
      return false;
    }
  }
  if (Date.now() - Date.parse(found.record.since) > MAX_HOLD_MS) return true;
  return found.record.host === os.hostname() && typeof found.record.pid === 'number' && !isProcessAlive(found.record.pid);
}

/**
 * Removes the lock file if `accept` agrees with what it holds. The file is first renamed to a
 * unique name, so no other process can swap in a fresh lock between the check and the removal.
 * A renamed file that is not the one expected goes back under its name; by link, so it never
 * overwrites a lock taken meanwhile (if one was, the displaced record is lost: that needs a third
 * process to take the lock within the few microseconds the name was free).
 */
function removeIf(file: string, accept: (found: Found, at: string) => boolean): void {
  const aside = `${file}.${randomBytes(8).toString('hex')}.removing`;
  try {
    fs.renameSync(file, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const found = readRecord(aside);
  if (found !== undefined && !accept(found, aside)) {
    try {
      fs.linkSync(aside, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  fs.rmSync(aside, { force: true });
}

function tryCreate(file: string, record: LockRecord): boolean {
  try {
    const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o600);
    try {
      fs.writeFileSync(fd, JSON.stringify(record));
    } finally {
      fs.closeSync(fd);
    }
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

async function acquire(file: string, timeoutMs: number): Promise<LockRecord> {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const record: LockRecord = { pid: process.pid, host: os.hostname(), nonce: randomBytes(16).toString('hex'), since: new Date().toISOString() };
  const deadline = Date.now() + timeoutMs;
  let delay = 5;
  for (;;) {
    if (tryCreate(file, record)) return record;
    const found = readRecord(file);
    if (found !== undefined && isStale(file, found)) {
      removeIf(file, (now, at) => now.raw === found.raw && isStale(at, now));
      continue;
    }
    if (Date.now() >= deadline) {
      const holder = found?.record ? ` (held by pid ${found.record.pid} since ${found.record.since})` : '';
      throw new WardError('lock_timeout', `another Ward process holds ${path.basename(file)}${holder} and did not release it within ${timeoutMs} ms; try again`);
    }
    await sleep(delay);
    delay = Math.min(delay * 2, 100);
  }
}

/** Runs `fn` inside a hold that is still in force, counting it until it finishes. */
function reenter<T>(hold: Hold, fn: () => Promise<T>): Promise<T> {
  const work = (async () => fn())();
  hold.nested.add(work);
  const done = () => hold.nested.delete(work);
  work.then(done, done);
  return work;
}

/**
 * Runs `fn` while holding a cross-process lock: a file created with O_EXCL that records pid,
 * host and a random nonce. A lock whose process is gone is broken; waiting is bounded.
 * Re-entrant within one async call chain while the hold lasts: work that `fn` started and left
 * running past its return (a timer, a promise) takes the lock like any other caller, and a
 * re-entrant use still running when `fn` returns keeps the lock held until it finishes.
 */
export async function withLock<T>(file: string, fn: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  const resolved = path.resolve(file);
  const mine = held.getStore();
  const current = mine?.get(resolved);
  if (current !== undefined && !current.released) return reenter(current, fn);
  const timeoutMs = options.timeoutMs ?? LOCK_TIMEOUT_MS;

  const previous = local.get(resolved) ?? Promise.resolve();
  let release!: () => void;
  const turn = new Promise<void>((resolve) => (release = resolve));
  const chain = previous.then(() => turn);
  local.set(resolved, chain);
  try {
    let timer: NodeJS.Timeout | undefined;
    const waited = await Promise.race([
      previous.then(() => true),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
    ]);
    clearTimeout(timer);
    if (!waited) throw new WardError('lock_timeout', `${path.basename(file)} is busy in this process for more than ${timeoutMs} ms; try again`);
    const record = await acquire(resolved, timeoutMs);
    const hold: Hold = { released: false, nested: new Set() };
    try {
      return await held.run(new Map([...(mine ?? []), [resolved, hold]]), fn);
    } finally {
      while (hold.nested.size > 0) await Promise.allSettled([...hold.nested]);
      hold.released = true;
      const own = JSON.stringify(record);
      removeIf(resolved, (now) => now.raw === own);
    }
  } finally {
    release();
    if (local.get(resolved) === chain) local.delete(resolved);
  }
}

/** Lock files of one namespace, named by purpose hashes (N1: no names in paths). */
export function lockPath(namespaceDirectory: string, purpose: string): string {
  return path.join(namespaceDirectory, 'locks', `${shortHash(purpose)}.lock`);
}
