/**
 * What changed between two indexes of one root: added, modified (content, mode or kind) and
 * deleted paths, and renames (a deleted and an added regular file with the same content).
 */
import type { FileChange, FileState } from '../../common/events.js';
import { stateOf, type TreeIndex } from './tree-index.js';

function same(a: FileState, b: FileState): boolean {
  return a.kind === b.kind && a.hash === b.hash && a.size === b.size && a.mode === b.mode && a.target === b.target && a.reason === b.reason;
}

/**
 * The changes from `before` to `after`, by path; `root` is recorded with each. An entry a scan
 * kept from the index it scanned against is the same object: unchanged without a look.
 */
export function diffIndexes(root: string, before: TreeIndex, after: TreeIndex): FileChange[] {
  const changes: FileChange[] = [];
  const deleted = new Map<string, string[]>();
  for (const file in before) {
    const entry = before[file]!;
    const now = after[file];
    if (now === entry) continue;
    if (now === undefined) {
      changes.push({ root, path: file, change: 'deleted', before: stateOf(entry), after: null });
      if (entry.kind === 'file' && entry.hash !== null) deleted.set(entry.hash, [...(deleted.get(entry.hash) ?? []), file]);
    } else if (!same(stateOf(entry), stateOf(now))) changes.push({ root, path: file, change: 'modified', before: stateOf(entry), after: stateOf(now) });
  }
  const renamedFrom = new Set<string>();
  for (const file in after) {
    const entry = after[file]!;
    if (before[file] !== undefined) continue;
    const from = entry.kind === 'file' && entry.hash !== null ? deleted.get(entry.hash)?.shift() : undefined;
    if (from === undefined) changes.push({ root, path: file, change: 'added', before: null, after: stateOf(entry) });
    else {
      renamedFrom.add(from);
      changes.push({ root, path: file, change: 'renamed', from, before: stateOf(before[from]!), after: stateOf(entry) });
    }
  }
  return changes.filter((change) => !(change.change === 'deleted' && renamedFrom.has(change.path))).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** One path's transition: a rename is its source going away and its target appearing. */
export interface PathTransition {
  readonly root: string;
  readonly path: string;
  readonly before: FileState | null;
  readonly after: FileState | null;
}

export function transitions(change: FileChange): PathTransition[] {
  if (change.change !== 'renamed') return [{ root: change.root, path: change.path, before: change.before, after: change.after }];
  return [
    { root: change.root, path: change.from!, before: change.before, after: null },
    { root: change.root, path: change.path, before: null, after: change.after },
  ];
}
