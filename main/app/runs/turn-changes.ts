/**
 * A turn's file changes (X1): every writable root of the run (its workspace and write grants) is
 * indexed while the CLI starts (its first model call waits for the index) and diffed once the
 * CLI and everything in its process group is gone, while the turn's own shutdown drains; the diff is journaled as
 * `files_changed` (in parts, so no event outgrows the journal's payload bound). Past a limit, or
 * on any failure, the turn journals `files_untracked` with the reason and goes on: tracking never
 * fails a turn.
 */
import { describeError } from '../../base/errors.js';
import type { Namespace } from '../../namespaces/namespace.js';
import { snapshotAfter, snapshotBefore, Untracked, type Snapshot } from '../../changes/tracker.js';
import type { NamespaceStore } from '../../store/namespace-store.js';
import { changeStoreFor } from '../changes.js';
import type { TurnDeps } from './turn-deps.js';
import type { TurnJournal } from './turn-journal.js';

/** Changes per `files_changed` event: a few hundred bytes each keeps an event well under 1 MiB. */
const CHANGES_PER_EVENT = 1_000;

export interface TrackedRun {
  readonly namespace: Namespace;
  readonly store: NamespaceStore;
  readonly conversationId: string;
  readonly roots: readonly string[];
  readonly denyRead: readonly string[];
  /** The namespace's file-change store cap (settings.json `changeStoreMaxMegabytes`). */
  readonly maxStoreBytes: number;
}

export class TurnChanges {
  /** The snapshot before the turn, once taken; null when the run is untracked. */
  private snapshot: Promise<Snapshot | null> = Promise.resolve(null);

  constructor(
    private readonly deps: TurnDeps,
    private readonly journal: TurnJournal,
    private readonly run: TrackedRun,
  ) {}

  /**
   * Before the CLI starts: finishes an interrupted rewind, then starts indexing every root beside
   * the CLI's start. Nothing the agent does can come before the index: the turn's model calls
   * wait for `ready` (a tool runs only when the model asks for it).
   */
  start(): void {
    const { store, conversationId, roots, denyRead, namespace } = this.run;
    try {
      this.deps.changes.recover(store, conversationId);
    } catch (error) {
      this.untracked(error);
      return;
    }
    this.snapshot = snapshotBefore(changeStoreFor(this.deps.home, namespace), conversationId, roots, denyRead, this.deps.changeLimits).catch((error: unknown) => {
      this.untracked(error);
      return null;
    });
  }

  /** Resolves once the snapshot before the turn is taken or given up (bounded by the scan's budget). */
  async ready(): Promise<void> {
    await this.snapshot;
  }

  /** After the turn (nothing of the agent's runs any more): what changed, journaled, the sandbox's stand-ins left out (../../sandbox/built-in-denies.ts). */
  async after(standIns: readonly string[]): Promise<void> {
    const snapshot = await this.snapshot;
    this.snapshot = Promise.resolve(null);
    if (snapshot === null) return;
    const started = performance.now();
    try {
      const { changes, files } = await snapshotAfter(changeStoreFor(this.deps.home, this.run.namespace), snapshot, this.deps.changeLimits, standIns);
      const scanMs = Math.round(performance.now() - started);
      for (let index = 0; index < changes.length; index += CHANGES_PER_EVENT) {
        this.journal.emit('files_changed', { changes: changes.slice(index, index + CHANGES_PER_EVENT), files, scanMs });
      }
    } catch (error) {
      this.untracked(error);
    }
    this.retain();
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
