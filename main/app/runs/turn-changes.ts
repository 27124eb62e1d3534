/**
 * A turn's file changes (X1): every writable root of the run (its workspace and write grants) is
 * indexed once the CLI is spawned, while it starts (its first model call waits for the index),
 * and scanned again at the end, once the CLI and everything in its process group is gone. A
 * watch records every change in the roots' folders from their first read on (../../changes/watch.ts),
 * and is kept between the conversation's turns in this process: each scan reads only the folders
 * it heard of. Where it cannot say (it gave up: too many changes, a watch lost), scans read every
 * folder, and the end scan begins before the end, off the turn's path: when finished calls wait
 * for the model's answer (per-call capture off) and again at the CLI's result if something
 * changed since; it is kept only if its own watch heard of no change, else the turn scans again
 * once the group is gone. The diff is journaled as
 * `files_changed` (in parts, so no event outgrows the journal's payload bound). Past a limit, or
 * on any failure, the turn journals `files_untracked` with the reason and goes on: tracking never
 * fails a turn.
 *
 * Per-call capture: a model request that hands the model tool results means those calls have
 * finished and none starts before the model answers (the gateway holds the request meanwhile),
 * so the changes since the last scan are the calls' own (parallel calls of one message share
 * them; a process they left running in the background may add to the next call's). They are
 * journaled as a `files_changed` tied to those `toolUseIds`; the end scan journals the rest. Each
 * such scan holds a model request, so it is on only while the last scan of the roots took at most
 * `perCallScanMs` (a stat walk of a small tree): past that, or at 0, the turn's changes are
 * journaled for the turn only, preceded by `files_per_call_off` saying why (only when it has changes).
 */
import type { FileChange } from '../../../common/events.js';
import { describeError } from '../../base/errors.js';
import { traceMark } from '../../base/trace.js';
import type { Namespace } from '../../namespaces/namespace.js';
import { diffAfter, keepWatching, scanAfter, snapshotAfter, snapshotBefore, Untracked, type Scanned, type Snapshot } from '../../changes/tracker.js';
import { TreeWatch } from '../../changes/watch.js';
import type { NamespaceStore } from '../../store/namespace-store.js';
import { changeStoreFor } from '../changes.js';
import type { TurnDeps } from './turn-deps.js';
import type { TurnJournal } from './turn-journal.js';

/** Changes per `files_changed` event: a few hundred bytes each keeps an event well under 1 MiB. */
const CHANGES_PER_EVENT = 1_000;
/** Tool calls one per-call event is tied to, and the length of an id (the provider's are about 30 characters). */
const MAX_IDS_PER_EVENT = 256;
const MAX_ID_CHARS = 256;

export interface TrackedRun {
  readonly namespace: Namespace;
  readonly store: NamespaceStore;
  readonly conversationId: string;
  readonly roots: readonly string[];
  readonly denyRead: readonly string[];
  /** The namespace's file-change store cap (settings.json `changeStoreMaxMegabytes`). */
  readonly maxStoreBytes: number;
  /** Per-call capture is on while a scan of the roots takes at most this (settings.json `perCallScanMilliseconds`; 0: off). */
  readonly perCallScanMs: number;
}

/** An end scan made while the CLI exited. */
interface EarlyScan {
  readonly from: Snapshot;
  readonly scanned: ReadonlyMap<string, Scanned>;
  readonly scanMs: number;
}

export class TurnChanges {
  /** The state of the roots at the last scan (before the turn, or after a tool call), once taken; null when the run is untracked. */
  private snapshot: Promise<Snapshot | null> = Promise.resolve(null);
  /** How long the last scan took; per-call capture is on while it is within `perCallScanMs`. */
  private lastScanMs = 0;
  /** Why per-call capture is off for the rest of the turn (a scan failed), or null. */
  private perCallFailed: string | null = null;
  /** Why a finished call's changes were not captured on their own (journaled with the turn's changes, if any), or null. */
  private perCallOffReason: string | null = null;
  /** The tool calls already captured (a retried request carries the same results). */
  private readonly captured = new Set<string>();
  /** Per-call scans run one at a time, and the end scan after them. */
  private queue: Promise<void> = Promise.resolve();
  private ended = false;
  private recovered = false;
  /** The sandbox's stand-ins while the run lasts (../../sandbox/built-in-denies.ts): not the agent's, never indexed. */
  private standIns: ReadonlySet<string> = new Set();
  /** The end scan begun before the turn's end (`settling`), and the watch that says whether it still holds. */
  private early: { readonly watch: TreeWatch; readonly scan: Promise<EarlyScan | null> } | null = null;

  constructor(
    private readonly deps: TurnDeps,
    private readonly journal: TurnJournal,
    private readonly run: TrackedRun,
  ) {}

  /** Before the CLI starts: finishes an interrupted rewind (a CLI never sees half a tree); on a failure the run is untracked. */
  recover(): void {
    try {
      this.deps.changes.recover(this.run.store, this.run.conversationId);
      this.recovered = true;
    } catch (error) {
      this.untracked(error);
    }
  }

  /**
   * Once the CLI is spawned: indexes every root while the CLI starts (not while Ward launches it);
   * after a turn of the conversation in this process, only the folders changed since (../../changes/quiet-trees.ts).
   * Nothing the agent does can come before the index: the turn's model calls wait for `ready` (a
   * tool runs only when the model asks for it).
   */
  start(standIns: readonly string[]): void {
    if (!this.recovered) return;
    const { conversationId, roots, denyRead, namespace } = this.run;
    this.standIns = new Set(standIns);
    const started = performance.now();
    this.snapshot = snapshotBefore(changeStoreFor(this.deps.home, namespace), conversationId, roots, denyRead, this.deps.changeLimits, standIns).then(
      (snapshot) => {
        this.lastScanMs = Math.round(performance.now() - started);
        traceMark('changes-indexed');
        return snapshot;
      },
      (error: unknown) => {
        this.untracked(error);
        return null;
      },
    );
  }

  /** X1: the tool calls `toolUseIds` have finished (a model request carries their results): their changes, journaled as theirs. Never throws. */
  afterCalls(toolUseIds: readonly string[]): Promise<void> {
    // Ids come from the child: bounded in number and length, so one event stays small.
    const fresh = toolUseIds.slice(0, MAX_IDS_PER_EVENT).filter((id) => id.length <= MAX_ID_CHARS && !this.captured.has(id));
    if (fresh.length === 0 || this.ended) return Promise.resolve();
    fresh.forEach((id) => this.captured.add(id));
    this.queue = this.queue.then(() => this.capture(fresh));
    return this.queue;
  }

  private async capture(toolUseIds: readonly string[]): Promise<void> {
    const snapshot = await this.snapshot;
    if (snapshot === null || this.ended) return;
    const off = this.perCallOff();
    if (off !== null) {
      this.perCallOffReason ??= off;
      // No call runs until the model answers, and this answer may be the last: the end scan begins.
      this.settling();
      return;
    }
    const started = performance.now();
    try {
      // The indexes are kept once, by the end scan: a model request waits for this one.
      const { changes, files, snapshot: now } = await snapshotAfter(changeStoreFor(this.deps.home, this.run.namespace), snapshot, this.deps.changeLimits, false);
      this.snapshot = Promise.resolve(now);
      this.lastScanMs = Math.round(performance.now() - started);
      traceMark('changes-call-scanned');
      this.emit(changes, files, this.lastScanMs, toolUseIds);
    } catch (error) {
      // The last state recorded stays: the end scan diffs against it.
      this.perCallFailed = `a scan after a tool call failed: ${error instanceof Untracked ? error.message : describeError(error)}`;
      this.perCallOffReason ??= this.perCallFailed;
    }
  }

  /** Why the calls' changes are not captured one by one, or null when they are. */
  private perCallOff(): string | null {
    const bound = this.run.perCallScanMs;
    if (bound === 0) return 'turned off (perCallScanMilliseconds is 0 in settings.json)';
    if (this.perCallFailed !== null) return this.perCallFailed;
    if (this.lastScanMs > bound) return `the last scan of the run's files took ${this.lastScanMs} ms, over the ${bound} ms a model request may wait for it (perCallScanMilliseconds in settings.json)`;
    return null;
  }

  /** Resolves once the snapshot before the turn is taken or given up (bounded by the scan's budget). */
  async ready(): Promise<void> {
    await this.snapshot;
  }

  /**
   * The end scan starts now (the CLI printed its result, or finished calls wait for the model's
   * answer), beside the CLI's exit, every folder watched from before its read
   * (../../changes/watch.ts). One begun earlier stays while its watch heard nothing. `after` keeps
   * it only if nothing changed until the agent's last process was gone; else it scans again.
   */
  settling(): void {
    if (this.ended) return;
    if (this.early?.watch.quiet === true) return;
    this.early?.watch.close();
    const store = changeStoreFor(this.deps.home, this.run.namespace);
    const watch = new TreeWatch(store.barrierDir, this.standIns);
    const scan = this.queue.then(async (): Promise<EarlyScan | null> => {
      const from = await this.snapshot;
      // A recording watch tells the end scan which few folders to read: nothing to begin early.
      if (from === null || this.ended || from.watch?.quiet === true) return null;
      const started = performance.now();
      const scanned = await scanAfter(store, from, this.deps.changeLimits, watch);
      traceMark('changes-early-scanned');
      return { from, scanned, scanMs: Math.round(performance.now() - started) };
    });
    // A failure here is met again, and journaled, by the scan after the exit.
    this.early = { watch, scan: scan.catch(() => null) };
  }

  /**
   * After the turn (the CLI's group is being killed, or a kept CLI idles): what changed,
   * journaled. `released`: resolves once the turn let its CLI go (group killed, sandbox and its
   * stand-ins released, calls drained); a scan begun earlier is judged only then, and its watch,
   * quiet, is kept for the next turn.
   */
  async after(released: Promise<unknown> = Promise.resolve()): Promise<void> {
    this.ended = true;
    await this.queue;
    const snapshot = await this.snapshot;
    this.snapshot = Promise.resolve(null);
    const early = await this.earlyScan(snapshot, released);
    if (snapshot === null) return;
    // Else the end scan reads what the recording watch heard of, once nothing of the agent's can write.
    if (early === null) await released.catch(() => undefined);
    const started = performance.now();
    // The watch that follows the state this scan finds, kept for the next turn (../../changes/quiet-trees.ts) once this turn's record is whole.
    let watching = early === null ? (snapshot.watch ?? null) : this.early!.watch;
    if (early !== null) snapshot.watch?.close();
    try {
      const store = changeStoreFor(this.deps.home, this.run.namespace);
      const scanned = early?.scanned ?? (await scanAfter(store, snapshot, this.deps.changeLimits));
      const { changes, files, snapshot: now } = diffAfter(store, snapshot, scanned);
      // Said only where it matters: changes that calls made and that are not tied to them.
      if (changes.length > 0 && this.perCallOffReason !== null) this.journal.emit('files_per_call_off', { reason: this.perCallOffReason });
      this.emit(changes, files, early?.scanMs ?? Math.round(performance.now() - started));
      if (watching?.quiet === true) keepWatching(store, now, watching, this.deps.changeLimits);
      else watching?.close();
      watching = null;
    } catch (error) {
      this.untracked(error);
    } finally {
      watching?.close();
    }
    this.retain();
  }

  /** The scan begun early, when it was of `snapshot` and nothing changed since it read each folder; else null. */
  private async earlyScan(snapshot: Snapshot | null, released: Promise<unknown>): Promise<EarlyScan | null> {
    const early = this.early;
    if (early === null) return null;
    const made = await early.scan;
    if (made === null || made.from !== snapshot) {
      early.watch.close();
      return null;
    }
    await released.catch(() => undefined);
    const quiet = await early.watch.settled(true);
    traceMark(quiet ? 'changes-early-kept' : 'changes-early-dropped');
    return quiet ? made : null;
  }

  private emit(changes: readonly FileChange[], files: number, scanMs: number, toolUseIds?: readonly string[]): void {
    for (let index = 0; index < changes.length; index += CHANGES_PER_EVENT) {
      this.journal.emit('files_changed', { changes: changes.slice(index, index + CHANGES_PER_EVENT), files, scanMs, ...(toolUseIds === undefined ? {} : { toolUseIds: [...toolUseIds] }) });
    }
  }

  /** Over its cap (a stat per pack to know), the store drops what it may (ChangeService.collect). */
  private retain(): void {
    const { store, namespace, maxStoreBytes } = this.run;
    try {
      if (changeStoreFor(this.deps.home, namespace).blobs.size().bytes > maxStoreBytes) this.deps.changes.collect(store, maxStoreBytes);
    } catch {
      // Retention is tried again after the next turn; the turn's own record is whole.
    }
  }

  private untracked(error: unknown): void {
    const reason = error instanceof Untracked ? (error as Untracked).message : `tracking failed: ${describeError(error)}`;
    try {
      this.journal.emit('files_untracked', { reason: this.journal.redact(reason).slice(0, 1000) });
    } catch {
      // the journal is failing; the turn's settle records that
    }
  }
}
