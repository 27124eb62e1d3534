/**
 * Rewinding files to the state before a journal event (X2). The plan comes from the journal: for
 * each path the file events from that point on touched, the state it should be in now (the last
 * `after`) and the one to restore (the first `before`). Every path is checked against the first
 * before anything is written: a path in another state is a conflict, and nothing changes unless
 * forced. Crash-safe: the plan is written as an intent record (fsync'd) before the first write,
 * each file is replaced by rename (a path is always whole, old or new), and an interrupted rewind
 * is finished from its record by the next process (every step is idempotent). A rewind never
 * writes inside `.git/`.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { FileChange, FileState } from '../../common/events.js';
import { sha256, type BlobStore } from './blobs.js';
import { transitions } from './diff.js';

/** One path the rewind restores: what the journal says it is now, and what it will be. */
export interface RewindOp {
  readonly root: string;
  readonly path: string;
  readonly expected: FileState | null;
  readonly target: FileState | null;
}

export interface RewindPlan {
  readonly ops: RewindOp[];
  readonly skipped: { path: string; reason: string }[];
}

/** The rewind of every change from `changes` (in journal order, from the event rewound to). */
export function planRewind(changes: readonly FileChange[], blobs: BlobStore): RewindPlan {
  const paths = new Map<string, RewindOp>();
  for (const change of changes) {
    for (const step of transitions(change)) {
      const key = `${step.root}\0${step.path}`;
      const known = paths.get(key);
      paths.set(key, { root: step.root, path: step.path, expected: step.after, target: known === undefined ? step.before : known.target });
    }
  }
  const ops: RewindOp[] = [];
  const skipped: { path: string; reason: string }[] = [];
  for (const op of paths.values()) {
    const shown = path.join(op.root, op.path);
    const why = unrestorable(op, blobs);
    if (why !== null) skipped.push({ path: shown, reason: why });
    else if (!sameState(op.expected, op.target)) ops.push(op);
  }
  return { ops, skipped };
}

function unrestorable(op: RewindOp, blobs: BlobStore): string | null {
  if (op.path.split('/').includes('.git')) return 'inside .git/ (a rewind never writes there)';
  const { target } = op;
  if (target === null || target.kind === 'link') return null;
  if (target.kind === 'special') return `${target.reason ?? 'special file'}: not restorable`;
  if (!target.stored || target.hash === null) return `its bytes were never kept (${target.reason ?? 'not stored'})`;
  if (!blobs.has(target.hash)) return 'its bytes are no longer in the store';
  return null;
}

function sameState(a: FileState | null, b: FileState | null): boolean {
  if (a === null || b === null) return a === b;
  if (a.kind !== b.kind || a.kind === 'special') return a.kind === b.kind;
  return a.hash === b.hash && a.target === b.target && (a.kind === 'link' || (a.mode & 0o7777) === (b.mode & 0o7777)) && (a.hash !== null || a.size === b.size);
}

/** A path's state on disk now, as the scan would record it (nothing stored). */
export function stateOnDisk(file: string): FileState | null {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(file);
  } catch {
    return null;
  }
  if (stat.isSymbolicLink()) {
    const target = fs.readlinkSync(file);
    return { kind: 'link', size: stat.size, mode: stat.mode, hash: sha256(target), target, stored: false };
  }
  if (!stat.isFile()) return { kind: 'special', size: stat.size, mode: stat.mode, hash: null, stored: false };
  return { kind: 'file', size: stat.size, mode: stat.mode, hash: sha256(fs.readFileSync(file)), stored: true };
}

/** The paths whose state on disk is not what the journal expects (a hash-less file is compared by size and mode). */
export function conflicts(plan: RewindPlan): { path: string; now: FileState | null }[] {
  const found: { path: string; now: FileState | null }[] = [];
  for (const op of plan.ops) {
    const file = path.join(op.root, op.path);
    const now = stateOnDisk(file);
    const expected = op.expected?.hash === null && now?.kind === 'file' ? { ...now, hash: null } : now;
    if (!sameState(expected, op.expected)) found.push({ path: file, now });
  }
  return found;
}

/** What an interrupted rewind needs to be finished: its plan, written before the first change. */
export interface RewindIntent {
  readonly id: string;
  /** The process applying it: while it lives, nobody else finishes the rewind. */
  readonly pid: number;
  readonly conversationId: string;
  readonly toSeq: number;
  readonly ops: RewindOp[];
  /** Each op's state on disk before the rewind (what the journal records as `before`). */
  readonly found: (FileState | null)[];
  readonly forced: string[];
  readonly skipped: { path: string; reason: string }[];
}

export function newIntent(conversationId: string, toSeq: number, plan: RewindPlan, forced: string[]): RewindIntent {
  // A rewind stores no bytes: what it replaces is kept only when it is what the journal expected (its blob exists).
  const found = plan.ops.map((op) => {
    const now = stateOnDisk(path.join(op.root, op.path));
    if (now?.kind !== 'file') return now;
    const kept = op.expected?.kind === 'file' && op.expected.stored && op.expected.hash === now.hash;
    return kept ? now : { ...now, stored: false, reason: op.expected?.reason ?? 'changed outside a run: not kept' };
  });
  return { id: randomUUID(), pid: process.pid, conversationId, toSeq, ops: plan.ops, found, forced, skipped: plan.skipped };
}

export function intentFile(dir: string, conversationId: string): string {
  return path.join(dir, 'rewinds', `${conversationId}.json`);
}

/** Writes the intent durably: after this returns, a crash is finished by the next process. */
export function writeIntent(dir: string, intent: RewindIntent): void {
  const file = intentFile(dir, intent.conversationId);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.tmp-${process.pid}`;
  const fd = fs.openSync(temporary, 'w', 0o600);
  try {
    fs.writeSync(fd, JSON.stringify(intent));
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(temporary, file);
  const dirFd = fs.openSync(path.dirname(file), 'r');
  try {
    fs.fsyncSync(dirFd);
  } finally {
    fs.closeSync(dirFd);
  }
}

/** The conversations with a rewind interrupted (or under way in another process): their intent records. */
export function pendingIntents(dir: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(path.join(dir, 'rewinds'));
  } catch {
    return [];
  }
  return names.flatMap((name) => /^([0-9a-f-]{36})\.json$/.exec(name)?.[1] ?? []);
}

export function readIntent(dir: string, conversationId: string): RewindIntent | null {
  try {
    return JSON.parse(fs.readFileSync(intentFile(dir, conversationId), 'utf8')) as RewindIntent;
  } catch {
    return null;
  }
}

export function removeIntent(dir: string, conversationId: string): void {
  fs.rmSync(intentFile(dir, conversationId), { force: true });
}

/** Puts one path in its target state; running it again changes nothing. */
function restore(op: RewindOp, blobs: BlobStore): void {
  const file = path.join(op.root, op.path);
  const { target } = op;
  if (target === null) {
    fs.rmSync(file, { force: true });
    removeEmptyParents(op.root, path.dirname(file));
    return;
  }
  fs.mkdirSync(path.dirname(file), { recursive: true });
  // The same name in every process: a rewind killed between this write and its rename leaves this
  // file, and the process that finishes the rewind removes it before writing its own.
  const temporary = path.join(path.dirname(file), `.ward-rewind-${path.basename(file).slice(0, 80)}`);
  fs.rmSync(temporary, { force: true });
  if (target.kind === 'link') fs.symlinkSync(target.target!, temporary);
  else {
    fs.writeFileSync(temporary, blobs.read(target.hash!), { mode: 0o600 });
    fs.chmodSync(temporary, target.mode & 0o7777);
  }
  fs.renameSync(temporary, file);
}

function removeEmptyParents(root: string, dir: string): void {
  let current = dir;
  while (current.startsWith(root + path.sep)) {
    try {
      fs.rmdirSync(current);
    } catch {
      return;
    }
    current = path.dirname(current);
  }
}

/** Applies every op of the intent, in order (the caller wrote the intent first). */
export function applyIntent(intent: RewindIntent, blobs: BlobStore, afterEach?: (done: number) => void): void {
  intent.ops.forEach((op, index) => {
    restore(op, blobs);
    afterEach?.(index + 1);
  });
}

/** The rewind's own changes, as journaled: from what was on disk to what it restored. */
export function rewindChanges(intent: RewindIntent): FileChange[] {
  return intent.ops.map((op, index) => {
    const before = intent.found[index] ?? null;
    const change = before === null ? 'added' : op.target === null ? 'deleted' : 'modified';
    return { root: op.root, path: op.path, change, before, after: op.target };
  });
}
