/**
 * What a conversation's last end scan found, kept in this process with the watch recording every
 * change since (./watch.ts): the next turn's scan before it reads only the folders the watch heard
 * of (none, most turns), not every folder beside the CLI's start — git's fsmonitor, with inotify.
 * Another deny list or size cap, or an index kept since by a scan the watch did not follow, and
 * the turn reads every folder as before. A few trees, for a while: each holds an inotify watch
 * per folder, a per-user resource.
 */
import type { TreeIndex } from './tree-index.js';
import type { TreeWatch } from './watch.js';

/** Conversations whose trees are kept at once, and for how long after their turn. */
const KEPT_TREES = 4;
const KEPT_MS = 10 * 60_000;

export interface QuietTree {
  readonly watch: TreeWatch;
  /** Each tracked root's index, as the end scan kept it. */
  readonly roots: ReadonlyMap<string, TreeIndex>;
  readonly denyRead: readonly string[];
  readonly maxFiles: number;
  readonly maxFileBytes: number;
}

const kept = new Map<string, { readonly tree: QuietTree; readonly timer: NodeJS.Timeout }>();

/** Keeps `tree` for the next turn of the conversation `key` (the one before it is closed). */
export function keepQuietTree(key: string, tree: QuietTree): void {
  dropQuietTree(key);
  const timer = setTimeout(() => dropQuietTree(key), KEPT_MS);
  timer.unref();
  kept.set(key, { tree, timer });
  if (kept.size > KEPT_TREES) dropQuietTree(kept.keys().next().value!);
}

/** The tree kept for `key`, no longer kept (a turn asks once). */
export function takeQuietTree(key: string): QuietTree | undefined {
  const entry = kept.get(key);
  if (entry === undefined) return undefined;
  clearTimeout(entry.timer);
  kept.delete(key);
  return entry.tree;
}

function dropQuietTree(key: string): void {
  takeQuietTree(key)?.watch.close();
}
