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
