/**
 * The desktop's view of a conversation's file changes (issue 26): the files of one change set
 * (a run's changes or a rewind, named by the sequence number of its first event) with their line
 * counts, one file's diff on demand, and rewinds that report conflicts as a list. Only what
 * `change-diff.ts` shows leaves here: a deny-read file's bytes never do (X1).
 */
import type { ChangedFileView, ChangeSetView, FileDiffView, RewindOutcomeView } from '../../common/views.js';
import { conversationRewindSummary, rewindSummary } from '../../common/file-changes.js';
import { WardError } from '../base/errors.js';
import type { NamespaceStore } from '../store/namespace-store.js';
import type { BlobStore } from '../changes/blobs.js';
import { changeDiff, changeHeader, textOf, type ChangeDiff } from './change-diff.js';
import { changeStoreFor, type ChangeService, type FileChange } from './changes.js';
import type { ConversationRewind } from './conversation-rewind.js';

export type RewindScope = 'files' | 'conversation' | 'both';

/** Past this many files a set's line counts are not computed (each count reads two blobs). */
export const MAX_COUNTED_FILES = 1_000;

function counts(diff: ChangeDiff): { added: number | null; removed: number | null } {
  if (diff.patch === null) return { added: null, removed: null };
  let added = 0;
  let removed = 0;
  for (const line of hunkLines(diff.patch)) {
    if (line.startsWith('+')) added++;
    else if (line.startsWith('-')) removed++;
  }
  return { added, removed };
}

/** A patch's lines from its first hunk on (jsdiff's `Index:`, `===`, `---` and `+++` lines dropped). */
function hunkLines(patch: string): string[] {
  const lines = patch.split('\n');
  const first = lines.findIndex((line) => line.startsWith('@@'));
  if (first < 0) return [];
  const hunks = lines.slice(first);
  if (hunks.at(-1) === '') hunks.pop();
  return hunks;
}

/** Diffs computed for a file list, kept for the diff fetched right after (the viewer opens the first file). */
const KEPT_DIFFS = 64;

/**
 * The lines of the first file's diff that come with the file list: more than the tallest viewer
 * shows at once (900 px of 20 px rows), so the viewer paints them while the rest is fetched.
 */
export const FIRST_SCREEN_LINES = 150;

/**
 * An added or deleted text file is all `+` or all `-` lines: its hunk is written directly, not
 * searched for by jsdiff (a 5,000-line file costs a split, not a diff). Null for other changes.
 */
function wholeFileDiff(blobs: BlobStore, change: FileChange): ChangeDiff | null {
  if ((change.before === null) === (change.after === null)) return null;
  const text = textOf(blobs, change.before ?? change.after);
  if (text === null || text === '') return null;
  const lines = text.split('\n');
  const ended = lines.at(-1) === '';
  if (ended) lines.pop();
  const sign = change.before === null ? '+' : '-';
  const range = change.before === null ? `-0,0 +1,${lines.length}` : `-1,${lines.length} +0,0`;
  const body = lines.map((line) => `${sign}${line}`).join('\n');
  return { header: changeHeader(change), patch: `@@ ${range} @@\n${body}\n${ended ? '' : '\\ No newline at end of file\n'}`, notShown: null };
}

export class ChangeViews {
  private readonly kept = new Map<string, ChangeDiff>();

  constructor(
    private readonly changes: ChangeService,
    private readonly home: () => string,
    private readonly conversation: ConversationRewind,
  ) {}

  /** The changes of the set whose first event is `seq`. */
  private set(store: NamespaceStore, conversationId: string, seq: number): FileChange[] {
    const entry = this.changes.list(store, conversationId).entries.find((candidate) => candidate.seq === seq);
    if (entry === undefined || entry.kind === 'untracked') throw new WardError('not_found', `event #${seq} of conversation ${conversationId} is not a file change`);
    return entry.changes;
  }

  private diffOf(store: NamespaceStore, conversationId: string, seq: number, index: number, change: FileChange): ChangeDiff {
    // Kept whole-file diffs too: the file list counts them, and the viewer fetches the first one right after.
    const key = `${store.namespace.hash}/${conversationId}/${seq}/${index}`;
    let diff = this.kept.get(key);
    if (diff === undefined) {
      const blobs = changeStoreFor(this.home(), store.namespace).blobs;
      diff = wholeFileDiff(blobs, change) ?? changeDiff(blobs, change);
      this.kept.set(key, diff);
      if (this.kept.size > KEPT_DIFFS) this.kept.delete(this.kept.keys().next().value!);
    }
    return diff;
  }

  private files(store: NamespaceStore, conversationId: string, seq: number, changes: readonly FileChange[]): ChangedFileView[] {
    return changes.map((change, index) => {
      const diff = index < MAX_COUNTED_FILES ? this.diffOf(store, conversationId, seq, index, change) : null;
      return {
        index,
        path: change.path,
        from: change.from ?? null,
        change: change.change,
        ...(diff === null ? { added: null, removed: null } : counts(diff)),
        notShown: diff?.notShown ?? null,
      };
    });
  }

  /** The set's files and its first file's diff up to `FIRST_SCREEN_LINES`: what the viewer shows first, in one request. */
  open(store: NamespaceStore, conversationId: string, seq: number): ChangeSetView {
    const changes = this.set(store, conversationId, seq);
    const files = this.files(store, conversationId, seq, changes);
    if (changes.length === 0) return { files, first: null };
    const first = this.view(changes[0]!, this.diffOf(store, conversationId, seq, 0, changes[0]!));
    return { files, first: first.lines === null ? first : { ...first, lines: first.lines.slice(0, FIRST_SCREEN_LINES) } };
  }

  diff(store: NamespaceStore, conversationId: string, seq: number, index: number): FileDiffView {
    const change = this.set(store, conversationId, seq)[index];
    if (change === undefined) throw new WardError('not_found', `the change set at event #${seq} has no file number ${index}`);
    return this.view(change, this.diffOf(store, conversationId, seq, index, change));
  }

  private view(change: FileChange, diff: ChangeDiff): FileDiffView {
    const lines = diff.patch === null ? null : hunkLines(diff.patch);
    return { path: change.path, header: diff.header, lines, totalLines: lines?.length ?? 0, notShown: diff.notShown };
  }

  /**
   * Rewinds the files, the conversation or both to before `to` (a run or an event's number);
   * without `force`, a file conflict changes nothing and is listed.
   */
  async rewind(store: NamespaceStore, conversationId: string, to: string, force: boolean, scope: RewindScope = 'files'): Promise<RewindOutcomeView> {
    if (!force && scope !== 'conversation') {
      const found = this.changes.rewindConflicts(store, conversationId, to);
      if (found.length > 0) return { outcome: 'conflicts', conflicts: found.map((conflict) => ({ path: conflict.path, now: conflict.now === null ? 'missing' : 'changed' })) };
    }
    if (scope === 'files') {
      const report = this.changes.rewindFiles(store, conversationId, to, { force });
      return { outcome: 'rewound', seq: report.seq!, summary: rewindSummary({ ...report, resumed: false }) };
    }
    if (scope === 'conversation') {
      const report = await this.conversation.rewind(store, conversationId, to);
      return { outcome: 'rewound', seq: report.seq!, summary: conversationRewindSummary(report) };
    }
    const both = await this.conversation.rewindBoth(store, conversationId, to, { force });
    return { outcome: 'rewound', seq: both.conversation.seq!, summary: `${rewindSummary({ ...both.files, resumed: false })}; ${conversationRewindSummary(both.conversation)}` };
  }
}
