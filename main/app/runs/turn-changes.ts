/**
 * A turn's file changes (X1): every writable root of the run (its workspace and write grants) is
 * indexed before the CLI starts and diffed after the turn; the diff is journaled as
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
}

export class TurnChanges {
  private snapshot: Snapshot | null = null;

  constructor(
    private readonly deps: TurnDeps,
    private readonly journal: TurnJournal,
    private readonly run: TrackedRun,
  ) {}

  /** Before the CLI starts: finish an interrupted rewind, then index every root. */
  before(): void {
    const { store, conversationId, roots, denyRead, namespace } = this.run;
    try {
      this.deps.changes.recover(store, conversationId);
      this.snapshot = snapshotBefore(changeStoreFor(this.deps.home, namespace), conversationId, roots, denyRead, this.deps.changeLimits);
    } catch (error) {
      this.untracked(error);
    }
  }

  /** After the turn: what changed, journaled. */
  after(): void {
    const snapshot = this.snapshot;
    if (snapshot === null) return;
    this.snapshot = null;
    const started = performance.now();
    try {
      const { changes, files } = snapshotAfter(changeStoreFor(this.deps.home, this.run.namespace), snapshot, this.deps.changeLimits);
      const scanMs = Math.round(performance.now() - started);
      for (let index = 0; index < changes.length; index += CHANGES_PER_EVENT) {
        this.journal.emit('files_changed', { changes: changes.slice(index, index + CHANGES_PER_EVENT), files, scanMs });
      }
    } catch (error) {
      this.untracked(error);
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
