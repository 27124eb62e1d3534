/**
 * The one wording of what a run did to the files (issue 26), for `ward`, the transcripts and the
 * desktop timeline: counts per kind of change. Paths are foreign text: callers escape them.
 * Shared by main and the renderer: no Node, no Electron.
 */
import type { FileChange } from './events.js';

/** "3 files changed (2 added, 1 deleted)"; "no file changed". */
export function changesSummary(changes: readonly FileChange[]): string {
  if (changes.length === 0) return 'no file changed';
  const counts = new Map<string, number>();
  for (const change of changes) counts.set(change.change, (counts.get(change.change) ?? 0) + 1);
  const parts = ['added', 'modified', 'deleted', 'renamed'].filter((kind) => counts.has(kind)).map((kind) => `${counts.get(kind)} ${kind}`);
  return `${changes.length} file${changes.length === 1 ? '' : 's'} changed (${parts.join(', ')})`;
}

/** One file's net change over a run's parts, with the tool calls whose parts touched it. */
export interface NetChange {
  readonly change: FileChange;
  readonly toolUseIds: readonly string[];
}

function sameState(before: FileChange['before'], after: FileChange['after']): boolean {
  return before !== null && after !== null && before.kind === after.kind && before.hash === after.hash && before.size === after.size && before.mode === after.mode && before.target === after.target;
}

/**
 * A run's changes journaled in parts (one per tool call where per-call capture is on, then the
 * turn's rest) as one change per file: its state before the first part that touched it against its
 * state after the last, following renames; a file that ended as it began (added then deleted, or
 * changed back by a later part) is no change. In the order files were first touched.
 */
export function netChanges(parts: readonly { readonly changes: readonly FileChange[]; readonly toolUseIds?: readonly string[] }[]): NetChange[] {
  let touched = 0;
  const files = new Map<string, { order: number; touches: number; root: string; origin: string; before: FileChange['before']; after: FileChange['after']; calls: Set<string> }>();
  for (const part of parts) {
    for (const change of part.changes) {
      const key = (name: string) => `${change.root}\u0000${name}`;
      const was = change.change === 'renamed' ? (change.from ?? change.path) : change.path;
      const earlier = files.get(key(was));
      files.delete(key(was));
      const file = earlier ?? { order: touched++, touches: 0, root: change.root, origin: was, before: change.before, after: change.after, calls: new Set<string>() };
      file.after = change.after;
      file.touches++;
      for (const id of part.toolUseIds ?? []) file.calls.add(id);
      files.set(key(change.path), file);
    }
  }
  const net: NetChange[] = [];
  for (const [key, file] of [...files].sort(([, a], [, b]) => a.order - b.order)) {
    const path = key.slice(file.root.length + 1);
    if ((file.before === null && file.after === null) || (file.touches > 1 && file.origin === path && sameState(file.before, file.after))) continue;
    const kind = file.before === null ? 'added' : file.after === null ? 'deleted' : file.origin !== path ? 'renamed' : 'modified';
    const change: FileChange = { root: file.root, path: kind === 'deleted' ? file.origin : path, change: kind, ...(kind === 'renamed' ? { from: file.origin } : {}), before: file.before, after: file.after };
    net.push({ change, toolUseIds: [...file.calls] });
  }
  return net;
}

/** Which tool calls a `files_changed` event is tied to (per-call capture), as words to follow its summary; '' for a turn's rest. */
export function byToolCalls(toolUseIds: readonly string[] | undefined, toolOf: (toolUseId: string) => string | undefined = () => undefined): string {
  if (toolUseIds === undefined || toolUseIds.length === 0) return '';
  const calls = toolUseIds.map((id) => {
    const tool = toolOf(id);
    return tool === undefined ? id : `${tool} (${id})`;
  });
  return ` by tool call${toolUseIds.length === 1 ? '' : 's'} ${calls.join(', ')}`;
}

/** Why a run's changes are not tied to each tool call. */
export function perCallOffLine(reason: string): string {
  return `changes in this run are not tied to each tool call: ${reason}`;
}

/** What a rewind did, in one line. */
export function rewindSummary(payload: { readonly toSeq: number; readonly changes: readonly FileChange[]; readonly forced: readonly string[]; readonly skipped: readonly unknown[]; readonly resumed: boolean }): string {
  const extra = [
    payload.forced.length > 0 ? `${payload.forced.length} conflicting forced` : '',
    payload.skipped.length > 0 ? `${payload.skipped.length} not restored` : '',
    payload.resumed ? 'finished after an interruption' : '',
  ].filter((part) => part !== '');
  return `files rewound to before event #${payload.toSeq}: ${changesSummary(payload.changes)}${extra.length > 0 ? `; ${extra.join(', ')}` : ''}`;
}

/** A conversation rewind's one line: what it rewound to (or undid) and the events no longer in the conversation. */
export function conversationRewindSummary(payload: { readonly toSeq: number; readonly undid: number | null; readonly rewound: readonly { from: number; to: number }[] }): string {
  const ranges = payload.rewound.map((range) => (range.from === range.to ? `#${range.from}` : `#${range.from}–#${range.to}`)).join(', ');
  const what = payload.undid === null ? `conversation rewound to before event #${payload.toSeq}` : `conversation rewind #${payload.undid} undone`;
  return `${what}; ${ranges === '' ? 'no events are rewound' : `events ${ranges} are rewound (kept in the journal, no longer in the conversation)`}`;
}
