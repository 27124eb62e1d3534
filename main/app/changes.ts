/**
 * What the agent did to the files (issue 26): a conversation's change events, their diffs, and
 * rewinding the files to before a run or an event (X1, X2). The plan of a rewind comes from the
 * journal alone; the rewind is journaled (`files_rewound`) and is itself undone by rewinding to
 * it. An interrupted rewind is finished (from its intent record) by the next process that opens
 * the namespace, or the next `ward changes`, `ward rewind` or turn of the conversation.
 */
import path from 'node:path';
import { readJournalEvent, type FileChange, type FileState } from '../../common/events.js';
import { journalEvent } from '../../common/events.js';
import { netChanges } from '../../common/file-changes.js';
import { WardError } from '../base/errors.js';
import { isProcessAlive } from '../base/process.js';
import { ChangeStore } from '../changes/tracker.js';
import { applyIntent, conflicts, newIntent, pendingIntents, planRewind, readIntent, removeIntent, rewindChanges, writeIntent, type RewindIntent } from '../changes/rewind.js';
import { namespaceDir, type Namespace } from '../namespaces/namespace.js';
import type { NamespaceStore } from '../store/namespace-store.js';
import { unifiedDiff } from './change-diff.js';

export type { FileChange, FileState };

/** One `files_changed` event of a run. */
export interface ChangePart {
  readonly seq: number;
  readonly toolUseIds: readonly string[] | null;
  readonly changes: FileChange[];
}

/** One change event of a conversation, as `ward changes` lists it. */
export type ChangeEntry =
  | {
      readonly seq: number;
      readonly runId: string | null;
      readonly kind: 'changed';
      /** One per file: the run's net change to it and the tool calls that touched it (none when per-call capture was off). */
      readonly changes: (FileChange & { readonly toolUseIds: readonly string[] })[];
      /** The run's events as journaled: each part's changes and the tool calls it is tied to (null: the turn's rest). */
      readonly parts: ChangePart[];
    }
  | { readonly seq: number; readonly runId: string | null; readonly kind: 'untracked'; readonly reason: string }
  | { readonly seq: number; readonly runId: string | null; readonly kind: 'rewound'; readonly toSeq: number; readonly changes: FileChange[]; readonly forced: string[]; readonly skipped: { path: string; reason: string }[]; readonly resumed: boolean };

export interface RewindOptions {
  readonly force?: boolean;
  readonly dryRun?: boolean;
  /** Called after each restored file (a test seam for interrupting a rewind). */
  readonly afterEach?: (done: number) => void;
}

export interface RewindReport {
  readonly toSeq: number;
  readonly changes: FileChange[];
  readonly forced: string[];
  readonly skipped: { path: string; reason: string }[];
  readonly dryRun: boolean;
  /** The journal's sequence number of the rewind's own event (null for a dry run). */
  readonly seq: number | null;
}

export function changeStoreFor(home: string, ns: Namespace): ChangeStore {
  return new ChangeStore(path.join(namespaceDir(home, ns), 'changes'));
}

const FILE_EVENTS = ['files_changed', 'files_untracked', 'files_rewound'];

/** The sequence number a `--to` names: a run (before its first event) or an event's number. */
export function rewindTarget(store: NamespaceStore, conversationId: string, to: string): number {
  if (/^\d{1,15}$/.test(to)) {
    const seq = Number(to);
    if (seq < 1 || seq > store.journal.lastSeq(conversationId)) throw new WardError('usage', `--to ${to}: conversation ${conversationId} has events 1 to ${store.journal.lastSeq(conversationId)}`);
    return seq;
  }
  const run = store.runs.resolve(to);
  if (run.conversationId !== conversationId) throw new WardError('usage', `run ${run.id} is not of conversation ${conversationId}`);
  const first = store.journal.firstSeqOfRun(conversationId, run.id);
  if (first === undefined) throw new WardError('not_found', `run ${run.id} has no events`);
  return first;
}

export class ChangeService {
  constructor(private readonly home: () => string) {}

  /** The conversation's file events (of one run, with `runId`); finishes an interrupted rewind first. */
  list(store: NamespaceStore, conversationRef: string, runRef?: string): { conversationId: string; entries: ChangeEntry[]; toolOf: (toolUseId: string) => string | undefined } {
    const { id } = store.conversations.resolve(conversationRef);
    this.recover(store, id);
    const runId = runRef === undefined ? undefined : store.runs.resolve(runRef).id;
    const entries: ChangeEntry[] = [];
    const tools = new Map<string, string>();
    for (const event of store.journal.read(id, 0)) {
      if (event.type === 'tool_call') {
        const call = readJournalEvent(event.type, event.payload);
        if (call.type === 'tool_call') tools.set(call.payload.toolUseId, call.payload.tool);
      }
      if (!FILE_EVENTS.includes(event.type) || (runId !== undefined && event.runId !== runId)) continue;
      const parsed = readJournalEvent(event.type, event.payload);
      const place = { seq: event.seq, runId: event.runId };
      const last = entries.at(-1);
      // A run's changes are journaled in parts: they are listed as one, each file once.
      if (parsed.type === 'files_changed') {
        const part = { seq: event.seq, toolUseIds: parsed.payload.toolUseIds ?? null, changes: parsed.payload.changes };
        if (last?.kind === 'changed' && last.runId === event.runId) last.parts.push(part);
        else entries.push({ ...place, kind: 'changed', changes: [], parts: [part] });
      }
      else if (parsed.type === 'files_untracked') entries.push({ ...place, kind: 'untracked', reason: parsed.payload.reason });
      else if (parsed.type === 'files_rewound') entries.push({ ...place, kind: 'rewound', ...parsed.payload });
    }
    const netted = entries.map((entry) =>
      entry.kind === 'changed' ? { ...entry, changes: netChanges(entry.parts.map((part) => ({ changes: part.changes, toolUseIds: part.toolUseIds ?? [] }))).map(({ change, toolUseIds }) => ({ ...change, toolUseIds })) } : entry,
    );
    return { conversationId: id, entries: netted, toolOf: (toolUseId) => tools.get(toolUseId) };
  }

  /** A change's unified diff (text files whose bytes Ward kept; others are named with sizes and hashes). */
  diff(store: NamespaceStore, change: FileChange): string {
    return unifiedDiff(changeStoreFor(this.home(), store.namespace).blobs, change);
  }

  /** The rewind to before `toSeq`: what it would restore and the files in a state the journal does not record. */
  private plan(store: NamespaceStore, conversationId: string, toSeq: number) {
    const later: FileChange[] = [];
    for (const event of store.journal.read(conversationId, toSeq - 1)) {
      const parsed = readJournalEvent(event.type, event.payload);
      if (parsed.type === 'files_changed' || parsed.type === 'files_rewound') later.push(...parsed.payload.changes);
    }
    const changes = changeStoreFor(this.home(), store.namespace);
    const plan = planRewind(later, changes.blobs);
    return { changes, plan, found: conflicts(plan) };
  }

  /** The files a rewind to before `to` would find changed since the journal's last record of them (nothing is written). */
  rewindConflicts(store: NamespaceStore, conversationRef: string, to: string): { path: string; now: FileState | null }[] {
    const { id } = store.conversations.resolve(conversationRef);
    this.recover(store, id);
    return this.plan(store, id, rewindTarget(store, id, to)).found;
  }

  /** X2: restores the files to their state before `to`; refuses (changing nothing) on a conflict unless forced. */
  rewindFiles(store: NamespaceStore, conversationRef: string, to: string, options: RewindOptions = {}): RewindReport {
    const { id } = store.conversations.resolve(conversationRef);
    this.recover(store, id);
    const active = store.runs.activeFor(id);
    if (active !== undefined) throw new WardError('conversation_busy', `conversation ${id} has a ${active.state} run (${active.id}): rewind once it has finished`);
    const toSeq = rewindTarget(store, id, to);
    const { changes, plan, found } = this.plan(store, id, toSeq);
    if (found.length > 0 && options.force !== true) {
      const listed = found.map((conflict) => `  ${conflict.path}: ${conflict.now === null ? 'missing' : 'changed'} since the journal's last record of it`).join('\n');
      throw new WardError('rewind_conflict', `nothing was changed: ${found.length} file${found.length === 1 ? ' is' : 's are'} not in the state the journal records (--force overwrites them):\n${listed}`);
    }
    const intent = newIntent(id, toSeq, plan, found.map((conflict) => conflict.path));
    if (options.dryRun === true) return { toSeq, changes: rewindChanges(intent), forced: intent.forced, skipped: intent.skipped, dryRun: true, seq: null };
    writeIntent(changes.dir, intent);
    applyIntent(intent, changes.blobs, options.afterEach);
    const seq = this.finish(store, changes, intent, false);
    return { toSeq, changes: rewindChanges(intent), forced: intent.forced, skipped: intent.skipped, dryRun: false, seq };
  }

  /** Journals a finished rewind once, then drops its intent record. */
  private finish(store: NamespaceStore, changes: ChangeStore, intent: RewindIntent, resumed: boolean): number {
    const payload = { id: intent.id, toSeq: intent.toSeq, changes: rewindChanges(intent), forced: intent.forced, skipped: intent.skipped, resumed };
    const [event] = store.journal.appendMany(intent.conversationId, [journalEvent('files_rewound', payload)]);
    removeIntent(changes.dir, intent.conversationId);
    return event!.seq;
  }

  /**
   * Retention: the namespace's blobs that no journal names (nor an interrupted rewind) and no
   * conversation's last index needs are dropped, and past `maxBytes` the oldest of those only an
   * index needs too (a change to such a file then shows, and rewinds, without its old bytes).
   * The journals' blobs live as long as their conversations.
   */
  collect(store: NamespaceStore, maxBytes: number): { removed: number; freedBytes: number } {
    const changes = changeStoreFor(this.home(), store.namespace);
    const conversations = new Set(store.conversations.list().map((conversation) => conversation.id));
    const live = new Set<string>();
    const keep = (state: FileState | null) => {
      if (state?.stored === true && state.hash !== null) live.add(state.hash);
    };
    for (const id of conversations) {
      for (const event of store.journal.read(id, 0)) {
        if (!FILE_EVENTS.includes(event.type)) continue;
        const parsed = readJournalEvent(event.type, event.payload);
        if (parsed.type === 'files_changed' || parsed.type === 'files_rewound') for (const change of parsed.payload.changes) [change.before, change.after].forEach(keep);
      }
      readIntent(changes.dir, id)?.ops.forEach((op) => [op.expected, op.target].forEach(keep));
    }
    return changes.blobs.collect(live, changes.indexedHashes(conversations), maxBytes);
  }

  /**
   * X2 at start: what a process killed mid-snapshot left is swept, and every rewind one was
   * killed in is finished, when a process first opens the namespace (any `ward` command that
   * opens it, the desktop's first look at it). A rewind under way elsewhere, or one that fails
   * now, is left for the conversation's next command, which tries again.
   */
  recoverAll(store: NamespaceStore): void {
    const changes = changeStoreFor(this.home(), store.namespace);
    try {
      changes.sweep();
    } catch {
      // a turn's own start sweeps again
    }
    for (const conversationId of pendingIntents(changes.dir)) {
      try {
        this.recover(store, conversationId);
      } catch {
        // busy in another process, or failing: the conversation's own commands report it
      }
    }
  }

  /**
   * X2: a rewind a process was interrupted in (its process is gone) is finished from its intent
   * record; what a scan killed mid-way left is swept (it never counted: no index names it).
   */
  recover(store: NamespaceStore, conversationId: string): void {
    const changes = changeStoreFor(this.home(), store.namespace);
    changes.sweep();
    const intent = readIntent(changes.dir, conversationId);
    if (intent === null) return;
    if (intent.pid !== process.pid && isProcessAlive(intent.pid)) throw new WardError('conversation_busy', `a rewind of conversation ${conversationId} is under way (process ${intent.pid})`);
    for (const event of store.journal.read(conversationId, intent.toSeq)) {
      const parsed = readJournalEvent(event.type, event.payload);
      if (parsed.type === 'files_rewound' && parsed.payload.id === intent.id) {
        removeIntent(changes.dir, conversationId);
        return;
      }
    }
    applyIntent(intent, changes.blobs);
    this.finish(store, changes, intent, true);
  }
}
