/**
 * Folds journal events into what the chat shows. Pure and incremental: the view state is a
 * function of the events up to `lastSeq`, so a reload replays from 0 and a resubscribe continues
 * from `lastSeq` (J1). Each event is parsed with its schema (common/events.ts): the journal is
 * data, not trusted code, and one that does not parse is shown as unreadable, never guessed at.
 * Every piece of model, tool or provider text is escaped here, once, with the one window escaper
 * (common/display.ts): answers, prompts, tool names, arguments and results alike (P1, U3).
 * Answers are kept whole (the list is virtualized); only tool texts are cut, where they are shown.
 */
import type { RunState } from '../../../common/events.js';
import type { JournalEventView } from '../../../common/views.js';
import { escapeForWindow, escapeLineForWindow } from '../../../common/display.js';
import { readJournalEvent, type EventOf } from '../../../common/events.js';
import { addTurn, describeUsage, foldUsage, NO_USAGE, USAGE_START, type UsageState, type UsageTotal } from '../../../common/usage.js';

export type ToolStatus = 'running' | 'ok' | 'error' | 'unknown';

/** A permission check folded into the card of the call it was about. */
export interface PermissionNote {
  readonly decision: 'allow' | 'deny';
  readonly text: string;
}

export type TimelineItem =
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
    }
  | { readonly kind: 'notice'; readonly key: string; readonly runId: string | null; readonly tone: 'info' | 'stopped' | 'error' | 'warning'; readonly text: string; readonly permission?: { readonly tool: string } }
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

const SUMMARY_CHARS = 120;

function stringify(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? '';
  } catch {
    return String(value);
  }
}

/** `file_path: /tmp/x, limit: 20`: what a collapsed tool row says about its arguments. */
function summarize(value: unknown): string {
  if (value === null || typeof value !== 'object') return value === undefined ? '' : escapeLineForWindow(String(value), SUMMARY_CHARS);
  const parts = Object.entries(value as Record<string, unknown>).map(([key, item]) => `${key}: ${typeof item === 'string' ? item : JSON.stringify(item)}`);
  return escapeLineForWindow(parts.join(', '), SUMMARY_CHARS);
}

const FINAL_STATES: readonly RunState[] = ['succeeded', 'failed', 'stopped', 'uncertain'];

/** What a tool entry shows of its result: the preview main journaled, else what is known of it. */
function toolOutput(result: EventOf<'tool_result'>['payload']): string {
  const code = result.errorCode === null ? '' : `${result.errorCode}: `;
  if ('delivered' in result) return `${code}the run ended before the result reached the model (${result.bytes} bytes)`;
  if (result.preview !== '') return `${code}${escapeForWindow(result.preview)}${result.previewTruncated ? `… (${result.bytes} bytes in all)` : ''}`;
  return result.errorCode ?? `${result.bytes} bytes returned to the model`;
}

/** Tool names as the timeline shows them: Ward's MCP prefix is not the person's concern. */
export function shownToolName(tool: string): string {
  return tool.startsWith('mcp__ward__') ? tool.slice('mcp__ward__'.length) : tool;
}

const joined = (text: string) => `${text}${text === '' || text.endsWith('\n') ? '' : '\n\n'}`;

/** Applies a batch of events in order; events at or before `lastSeq` are ignored (idempotent replay). */
export function applyEvents(state: ConversationState, events: readonly JournalEventView[]): ConversationState {
  const fresh = events.filter((event) => event.seq > state.lastSeq);
  if (fresh.length === 0) return state;
  const items = [...state.items];
  let run = state.run;
  let lastSeq = state.lastSeq;
  let usage = state.usage;
  /** The newest tool entry of the run still open for `tool` (a permission check is about it). */
  const openTool = (runId: string | null, tool: string): number => {
    for (let index = items.length - 1; index >= 0 && index >= items.length - 200; index--) {
      const item = items[index]!;
      if (item.kind === 'tool' && item.runId === runId && item.tool === tool && item.output === null) return index;
    }
    return -1;
  };
  const findTool = (callId: string): number => {
    for (let index = items.length - 1; index >= 0; index--) {
      const item = items[index]!;
      if (item.kind === 'tool' && item.callId === callId) return index;
    }
    return -1;
  };
  let usageTotal = state.usageTotal;

  for (const view of fresh) {
    lastSeq = view.seq;
    const key = `e${view.seq}`;
    const at = view.createdAt;
    const runId = view.runId;
    const event = readJournalEvent(view.type, view.payload);
    const [nextUsage, turn] = foldUsage(usage, view.runId, view.createdAt, event);
    usage = nextUsage;
    switch (event.type) {
      case 'run_started':
        if (runId !== null) run = { id: runId, state: 'running', reason: null };
        break;
      case 'user_prompt':
        items.push({ kind: 'user', key, runId, at, text: escapeForWindow(event.payload.text), prompt: event.payload.text });
        break;
      case 'assistant_delta': {
        const { messageIndex } = event.payload;
        const text = escapeForWindow(event.payload.text);
        const last = items[items.length - 1];
        if (last?.kind === 'assistant' && last.runId === runId && last.streaming?.messageIndex === messageIndex) {
          items[items.length - 1] = { ...last, text: `${last.text}${text}` };
        } else if (last?.kind === 'assistant' && last.runId === runId) {
          const before = joined(last.text);
          items[items.length - 1] = { ...last, text: `${before}${text}`, streaming: { messageIndex, before } };
        } else {
          items.push({ kind: 'assistant', key, runId, at, text, streaming: { messageIndex, before: '' } });
        }
        break;
      }
      case 'assistant_text': {
        const text = escapeForWindow(event.payload.text);
        const last = items[items.length - 1];
        if (last?.kind === 'assistant' && last.runId === runId && last.streaming != null) {
          // The final text is authoritative: it replaces what the deltas built up.
          items[items.length - 1] = { ...last, text: `${last.streaming.before}${text}`, streaming: null };
        } else if (last?.kind === 'assistant' && last.runId === runId) {
          items[items.length - 1] = { ...last, text: `${joined(last.text)}${text}` };
        } else {
          items.push({ kind: 'assistant', key, runId, at, text });
        }
        break;
      }
      case 'tool_call': {
        const { toolUseId, arguments: args } = event.payload;
        const tool = escapeLineForWindow(event.payload.tool, 200);
        // A check journaled before its call arrived (the stream and the approval race) joins the card.
        const permissions: PermissionNote[] = [];
        for (let index = items.length - 1; index >= 0 && index >= items.length - 20; index--) {
          const item = items[index]!;
          if (item.kind === 'notice' && item.permission?.tool === tool && item.runId === runId) {
            permissions.unshift({ decision: item.tone === 'warning' ? 'deny' : 'allow', text: item.text });
            items.splice(index, 1);
            break;
          }
        }
        items.push({ kind: 'tool', key, runId, at, callId: toolUseId, tool, args: escapeForWindow(stringify(args)), summary: summarize(args), status: 'running', output: null, durationMs: null, permissions });
        break;
      }
      case 'tool_result': {
        const result = event.payload;
        const done = { status: result.ok ? ('ok' as const) : ('error' as const), output: toolOutput(result), durationMs: result.durationMs };
        const index = findTool(result.toolUseId);
        if (index < 0) {
          items.push({ kind: 'tool', key, runId, at, callId: result.toolUseId, tool: escapeLineForWindow(result.tool ?? 'tool', 200), args: '', summary: '', permissions: [], ...done });
        } else items[index] = { ...(items[index] as ToolItem), ...done };
        break;
      }
      case 'run_stopping':
        if (run !== null && (runId === null || runId === run.id)) run = { ...run, state: 'stopping' };
        break;
      case 'run_finished': {
        const { state, reason } = event.payload;
        run = { id: runId ?? run?.id ?? '', state, reason };
        // Calls the run never reported back on: what they did is unknown.
        for (let index = items.length - 1; index >= 0; index--) {
          const item = items[index]!;
          if (item.kind === 'user' && item.runId !== runId) break;
          if (item.kind === 'tool' && item.runId === runId && item.status === 'running') items[index] = { ...item, status: 'unknown' };
        }
        const shownReason = reason ? `: ${escapeForWindow(reason)}` : '';
        if (state === 'stopped') items.push({ kind: 'notice', key, runId, tone: 'stopped', text: 'Stopped' });
        else if (state === 'failed') items.push({ kind: 'notice', key, runId, tone: 'error', text: `The run failed${shownReason}` });
        else if (state === 'uncertain') items.push({ kind: 'notice', key, runId, tone: 'warning', text: `The outcome of this run is unknown${shownReason}` });
        break;
      }
      case 'run_reconciled': {
        const { state, note } = event.payload;
        run = { id: runId ?? run?.id ?? '', state, reason: note };
        items.push({ kind: 'notice', key, runId, tone: 'info', text: `Reconciled as ${state}: ${escapeForWindow(note)}` });
        break;
      }
      case 'permission_decision': {
        const { decision, reason, answerer } = event.payload;
        const tool = escapeLineForWindow(shownToolName(event.payload.tool), 200);
        const by = answerer.by === 'person' ? 'you' : answerer.by === 'rule' ? 'a grant' : answerer.by === 'timeout' ? 'no answer in time' : answerer.by === 'policy' ? 'the admin policy' : 'Ward';
        const text = `${decision === 'allow' ? 'Allowed' : 'Denied'} by ${by} (${escapeForWindow(reason)})`;
        const index = openTool(runId, tool);
        if (index >= 0) {
          const item = items[index] as ToolItem;
          items[index] = { ...item, permissions: [...item.permissions, { decision, text }] };
        } else {
          items.push({ kind: 'notice', key, runId, tone: decision === 'allow' ? 'info' : 'warning', text: `Permission ${decision} for ${tool}: ${text}`, permission: { tool } });
        }
        break;
      }
      case 'diagnostic':
        items.push({ kind: 'notice', key, runId, tone: 'warning', text: escapeForWindow(event.payload.detail) });
        break;
      case 'unreadable':
        items.push({ kind: 'notice', key, runId, tone: 'warning', text: `Unreadable event: ${escapeLineForWindow(event.payload.storedType, 64)}` });
        break;
      case 'model_call':
        // Only a provider that failed is news in the chat (the CLI may be retrying).
        if (event.payload.status >= 400 || event.payload.status === 0) {
          items.push({ kind: 'notice', key, runId, tone: 'warning', text: `The model provider ${escapeForWindow(event.payload.problem ?? `answered HTTP ${event.payload.status}`)}` });
        }
        break;
      case 'model_retry': {
        const { attempt, maxRetries, delayMs, status } = event.payload;
        items.push({ kind: 'notice', key, runId, tone: 'info', text: escapeLineForWindow(`Retrying the model (${attempt} of ${maxRetries}) in ${Math.max(1, Math.round(delayMs / 1000))} s${status === null ? '' : ` after HTTP ${status}`}`, 200) });
        break;
      }
      case 'provider_error':
        items.push({ kind: 'notice', key, runId, tone: 'warning', text: escapeLineForWindow(`The model call failed: ${event.payload.text}`, 500) });
        break;
      case 'elicitation_answered': {
        const { server, action, by } = event.payload;
        const how = by === 'person' ? '' : by === 'timeout' ? ' (no answer in time)' : by === 'no_one' ? ' (no one to ask)' : ' (the run ended)';
        const outcome = { accept: 'answered', decline: 'declined', cancel: 'cancelled' }[action];
        items.push({ kind: 'notice', key, runId, tone: 'info', text: escapeLineForWindow(`The server ${server} asked for input: ${outcome}${how}`, 300) });
        break;
      }
      case 'elicitation_refused':
        items.push({ kind: 'notice', key, runId, tone: 'warning', text: escapeLineForWindow(`Ward refused a request for input from ${event.payload.server}: ${event.payload.reason}`, 500) });
        break;
      case 'usage':
      case 'tool_refused':
      case 'tool_drained':
      case 'elicitation_requested':
        // Not shown in the chat: usage becomes the turn's line below, a request for input is shown where approvals are.
        break;
      default:
        event satisfies never;
    }
    // A turn that reported what it used gets a line under it.
    if (turn !== null && (turn.tokensFrom !== null || turn.costUsd !== null)) {
      usageTotal = addTurn(usageTotal, turn);
      items.push({ kind: 'usage', key: `u${view.seq}`, runId: turn.runId, text: `Turn: ${describeUsage(turn.tokens, turn.costUsd)}` });
    }
  }
  return { items, lastSeq, run, usage, usageTotal };
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
