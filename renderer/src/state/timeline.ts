/**
 * What the chat shows of a conversation: its items (apply-events.ts folds journal events into
 * them), the run the composer reflects, and the rows the list draws (tool calls grouped).
 */
import type { FileChange, RunState } from '../../../common/events.js';
import { NO_USAGE, USAGE_START, type UsageState, type UsageTotal } from '../../../common/usage.js';

/** `denied`: a permission check said no; not an error of the tool's, shown neutral. */
export type ToolStatus = 'running' | 'ok' | 'error' | 'denied' | 'unknown';

/** A permission check folded into the card of the call it was about. */
export interface PermissionNote {
  readonly decision: 'allow' | 'deny';
  readonly text: string;
  /** The person answered (a denial then reads "Denied by you", with no reason to add). */
  readonly byPerson?: boolean;
}

/** `rewound`: the conversation was rewound to before this item (it stays in the journal, shown dimmed). */
export type TimelineItem = TimelineItemBody & { readonly rewound?: boolean };

type TimelineItemBody =
  | { readonly kind: 'user'; readonly key: string; readonly runId: string | null; readonly at: string; readonly text: string; readonly prompt: string }
  | {
      readonly kind: 'assistant';
      readonly key: string;
      readonly runId: string | null;
      readonly at: string;
      readonly agent?: string;
      readonly text: string;
      /** Set while a block streams: its index in the run and the text before it, for the final text to replace the deltas. */
      readonly streaming?: { readonly messageIndex: number; readonly before: string } | null;
    }
  | {
      readonly kind: 'tool';
      readonly key: string;
      readonly runId: string | null;
      readonly at: string;
      readonly callId: string;
      readonly tool: string;
      readonly args: string;
      /** One line: the first arguments, for the collapsed row. */
      readonly summary: string;
      readonly status: ToolStatus;
      readonly output: string | null;
      readonly durationMs: number | null;
      readonly permissions: readonly PermissionNote[];
      /** The files this call changed (per-call capture); `shared`: parallel calls of one message changed them together. */
      readonly changedFiles?: { readonly count: number; readonly shared: boolean };
    }
  | {
      readonly kind: 'notice';
      readonly key: string;
      readonly runId: string | null;
      readonly tone: 'info' | 'stopped' | 'error' | 'warning';
      readonly text: string;
      readonly permission?: { readonly tool: string };
      /** Set on the run's one line about failed model calls: how many retries it has counted. */
      readonly modelRetries?: number;
      /** Set on a conversation rewind's marker: its event, which a rewind to undoes it. */
      readonly rewindSeq?: number;
    }
  /**
   * What a run did to the files (its parts merged), or a rewind: a summary that opens the diff
   * viewer. `seq` is the set's first event; `rewind` marks a rewind (undone by rewinding to it).
   */
  | { readonly kind: 'changes'; readonly key: string; readonly runId: string | null; readonly seq: number; readonly changes: readonly FileChange[]; readonly rewind: boolean; readonly text: string }
  /** What a turn used and cost, under the turn. */
  | { readonly kind: 'usage'; readonly key: string; readonly runId: string | null; readonly text: string };

export type ToolItem = Extract<TimelineItem, { kind: 'tool' }>;

/** The run the composer reflects; `stopping` is shown as "Stopping…", `stopped` is not an error. */
export interface RunStatus {
  readonly id: string;
  readonly state: RunState;
  readonly reason: string | null;
}

export interface ConversationState {
  readonly items: readonly TimelineItem[];
  readonly lastSeq: number;
  readonly run: RunStatus | null;
  /** The turns' usage so far (common/usage.ts) and their total. */
  readonly usage: UsageState;
  readonly usageTotal: UsageTotal;
}

export const EMPTY_CONVERSATION: ConversationState = { items: [], lastSeq: 0, run: null, usage: USAGE_START, usageTotal: NO_USAGE };

const FINAL_STATES: readonly RunState[] = ['succeeded', 'failed', 'stopped', 'uncertain'];

/** Tool names as the timeline shows them: Ward's MCP prefix is not the person's concern. */
export function shownToolName(tool: string): string {
  return tool.startsWith('mcp__ward__') ? tool.slice('mcp__ward__'.length) : tool;
}

/** The row that shows event `seq`: the last one made at or before it (a tool result lives in its call's row). */
export function indexAtSeq(items: readonly TimelineItem[], seq: number): number | null {
  for (let index = items.length - 1; index >= 0; index--) if (Number(items[index]!.key.slice(1)) <= seq) return index;
  return null;
}

/** Combines the journal's view of the run with the store's authoritative state (from conversations.get). */
export function mergeRunState(journalRun: RunStatus | null, storeRun: RunStatus | null): RunStatus | null {
  if (storeRun === null) return journalRun;
  if (journalRun !== null && journalRun.id === storeRun.id && FINAL_STATES.includes(journalRun.state)) return journalRun;
  return storeRun;
}

/** A row of the timeline: an item, or a run of consecutive tool calls folded into one. */
export type TimelineRowModel = { readonly kind: 'item'; readonly key: string; readonly item: TimelineItem } | { readonly kind: 'group'; readonly key: string; readonly tools: readonly ToolItem[] };

const ITEM_ROWS = new WeakMap<TimelineItem, TimelineRowModel>();

/** Consecutive calls from this many on are grouped ("Ran 50 tools · 1 error"). */
export const GROUP_FROM = 3;

/**
 * Rows for the list: runs of GROUP_FROM or more consecutive tool calls become one group row,
 * unless the person opened it (`open` holds its key) or one of its calls is still running or
 * waiting (so its state stays in sight).
 */
export function timelineRows(items: readonly TimelineItem[], open: ReadonlySet<string>, keep: (tool: ToolItem) => boolean): TimelineRowModel[] {
  const rows: TimelineRowModel[] = [];
  // The same item keeps the same row object, so a memoized row skips re-rendering.
  const itemRow = (item: TimelineItem): TimelineRowModel => {
    let row = ITEM_ROWS.get(item);
    if (row === undefined) {
      row = { kind: 'item', key: item.key, item };
      ITEM_ROWS.set(item, row);
    }
    return row;
  };
  let run: ToolItem[] = [];
  const flush = () => {
    if (run.length >= GROUP_FROM && !open.has(run[0]!.key) && !run.some(keep)) rows.push({ kind: 'group', key: `g${run[0]!.key}`, tools: run });
    else for (const tool of run) rows.push(itemRow(tool));
    run = [];
  };
  for (const item of items) {
    if (item.kind === 'tool') run.push(item);
    else {
      flush();
      rows.push(itemRow(item));
    }
  }
  flush();
  return rows;
}
