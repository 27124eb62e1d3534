/**
 * Folds journal events into what the chat shows. Pure and incremental: the view state is a
 * function of the events up to `lastSeq`, so a reload replays from 0 and a resubscribe continues
 * from `lastSeq` (J1). Each event is parsed with its schema (preload/events.ts): the journal is
 * data, not trusted code, and one that does not parse is shown as unreadable, never guessed at.
 */
import type { JournalEventView, RunState } from '../../../preload/contract.js';
import { escapeInvisible, escapeOneLine } from '../../../preload/display.js';
import { readJournalEvent, type EventOf } from '../../../preload/events.js';
import { addTurn, describeUsage, foldUsage, NO_USAGE, USAGE_START, type UsageState, type UsageTotal } from '../../../preload/usage.js';

export type ToolStatus = 'running' | 'ok' | 'error';

export type TimelineItem =
  | { readonly kind: 'user'; readonly key: string; readonly text: string }
  | {
      readonly kind: 'assistant';
      readonly key: string;
      readonly runId: string | null;
      readonly text: string;
      /** Set while a block streams: its index in the run and the text before it, for the final text to replace the deltas. */
      readonly streaming?: { readonly messageIndex: number; readonly before: string } | null;
    }
  | {
      readonly kind: 'tool';
      readonly key: string;
      readonly callId: string;
      readonly tool: string;
      readonly args: string;
      readonly status: ToolStatus;
      readonly output: string | null;
      readonly durationMs: number | null;
    }
  | { readonly kind: 'notice'; readonly key: string; readonly tone: 'info' | 'stopped' | 'error' | 'warning'; readonly text: string }
  /** What a turn used and cost, under the turn. */
  | { readonly kind: 'usage'; readonly key: string; readonly text: string };

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
  /** The turns' usage so far (preload/usage.ts) and their total. */
  readonly usage: UsageState;
  readonly usageTotal: UsageTotal;
}

export const EMPTY_CONVERSATION: ConversationState = { items: [], lastSeq: 0, run: null, usage: USAGE_START, usageTotal: NO_USAGE };

const MAX_SHOWN_CHARS = 4_000;

function bounded(text: string): string {
  return text.length > MAX_SHOWN_CHARS ? `${text.slice(0, MAX_SHOWN_CHARS)}… (${text.length - MAX_SHOWN_CHARS} more characters)` : text;
}

function stringify(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? '';
  } catch {
    return String(value);
  }
}

const FINAL_STATES: readonly RunState[] = ['succeeded', 'failed', 'stopped', 'uncertain'];

/** What a tool entry shows of its result: the preview main journaled, else what is known of it. */
function toolOutput(result: EventOf<'tool_result'>['payload']): string {
  const code = result.errorCode === null ? '' : `${result.errorCode}: `;
  if ('delivered' in result) return `${code}the run ended before the result reached the model (${result.bytes} bytes)`;
  if (result.preview !== '') return `${code}${escapeInvisible(result.preview)}${result.previewTruncated ? `… (${result.bytes} bytes in all)` : ''}`;
  return result.errorCode ?? `${result.bytes} bytes returned to the model`;
}

/** Applies a batch of events in order; events at or before `lastSeq` are ignored (idempotent replay). */
export function applyEvents(state: ConversationState, events: readonly JournalEventView[]): ConversationState {
  const fresh = events.filter((event) => event.seq > state.lastSeq);
  if (fresh.length === 0) return state;
  const items = [...state.items];
  // Tool entries are found by call id; built lazily from the current items.
  const toolIndex: { map: Map<string, number> | null } = { map: null };
  const findTool = (callId: string): number | undefined => {
    if (toolIndex.map === null) {
      const map = new Map<string, number>();
      items.forEach((item, index) => {
        if (item.kind === 'tool') map.set(item.callId, index);
      });
      toolIndex.map = map;
    }
    return toolIndex.map.get(callId);
  };
  let run = state.run;
  let lastSeq = state.lastSeq;
  let usage = state.usage;
  let usageTotal = state.usageTotal;

  for (const view of fresh) {
    lastSeq = view.seq;
    const key = `e${view.seq}`;
    const event = readJournalEvent(view.type, view.payload);
    const [nextUsage, turn] = foldUsage(usage, view.runId, view.createdAt, event);
    usage = nextUsage;
    switch (event.type) {
      case 'run_started':
        if (view.runId !== null) run = { id: view.runId, state: 'running', reason: null };
        break;
      case 'user_prompt':
        items.push({ kind: 'user', key, text: bounded(event.payload.text) });
        break;
      case 'assistant_delta': {
        const { text, messageIndex } = event.payload;
        const last = items[items.length - 1];
        if (last?.kind === 'assistant' && last.runId === view.runId && last.streaming?.messageIndex === messageIndex) {
          // Past the display bound the rest is not shown anyway; the final text settles it.
          if (last.text.length < MAX_SHOWN_CHARS) items[items.length - 1] = { ...last, text: bounded(`${last.text}${text}`) };
        } else if (last?.kind === 'assistant' && last.runId === view.runId) {
          const before = `${last.text}${last.text.endsWith('\n') ? '' : '\n\n'}`;
          items[items.length - 1] = { ...last, text: bounded(`${before}${text}`), streaming: { messageIndex, before } };
        } else {
          items.push({ kind: 'assistant', key, runId: view.runId, text: bounded(text), streaming: { messageIndex, before: '' } });
        }
        break;
      }
      case 'assistant_text': {
        const { text } = event.payload;
        const last = items[items.length - 1];
        if (last?.kind === 'assistant' && last.runId === view.runId && last.streaming != null) {
          // The final text is authoritative: it replaces what the deltas built up.
          items[items.length - 1] = { ...last, text: bounded(`${last.streaming.before}${text}`), streaming: null };
        } else if (last?.kind === 'assistant' && last.runId === view.runId) {
          items[items.length - 1] = { ...last, text: bounded(`${last.text}${last.text.endsWith('\n') ? '' : '\n\n'}${text}`) };
        } else {
          items.push({ kind: 'assistant', key, runId: view.runId, text: bounded(text) });
        }
        break;
      }
      case 'tool_call': {
        const { toolUseId, tool } = event.payload;
        items.push({ kind: 'tool', key, callId: toolUseId, tool, args: bounded(stringify(event.payload.arguments)), status: 'running', output: null, durationMs: null });
        toolIndex.map?.set(toolUseId, items.length - 1);
        break;
      }
      case 'tool_result': {
        const result = event.payload;
        const done = { status: result.ok ? ('ok' as const) : ('error' as const), output: bounded(toolOutput(result)), durationMs: result.durationMs };
        const index = findTool(result.toolUseId);
        if (index === undefined) items.push({ kind: 'tool', key, callId: result.toolUseId, tool: result.tool ?? 'tool', args: '', ...done });
        else items[index] = { ...(items[index] as Extract<TimelineItem, { kind: 'tool' }>), ...done };
        break;
      }
      case 'run_stopping':
        if (run !== null && (view.runId === null || view.runId === run.id)) run = { ...run, state: 'stopping' };
        break;
      case 'run_finished': {
        const { state, reason } = event.payload;
        run = { id: view.runId ?? run?.id ?? '', state, reason };
        if (state === 'stopped') items.push({ kind: 'notice', key, tone: 'stopped', text: 'Stopped' });
        else if (state === 'failed') items.push({ kind: 'notice', key, tone: 'error', text: `The run failed${reason ? `: ${bounded(reason)}` : ''}` });
        else if (state === 'uncertain') items.push({ kind: 'notice', key, tone: 'warning', text: `The outcome of this run is unknown${reason ? `: ${bounded(reason)}` : ''}` });
        break;
      }
      case 'run_reconciled': {
        const { state, note } = event.payload;
        run = { id: view.runId ?? run?.id ?? '', state, reason: note };
        items.push({ kind: 'notice', key, tone: 'info', text: bounded(`Reconciled as ${state}: ${note}`) });
        break;
      }
      case 'permission_decision': {
        const { decision, tool, reason } = event.payload;
        items.push({ kind: 'notice', key, tone: decision === 'allow' ? 'info' : 'warning', text: bounded(`Permission ${decision} for ${tool} (${reason})`) });
        break;
      }
      case 'diagnostic':
        items.push({ kind: 'notice', key, tone: 'warning', text: bounded(event.payload.detail) });
        break;
      case 'unreadable':
        items.push({ kind: 'notice', key, tone: 'warning', text: `Unreadable event: ${escapeOneLine(event.payload.storedType, 64)}` });
        break;
      case 'model_call':
        // Only a provider that failed is news in the chat (the CLI may be retrying).
        if (event.payload.status >= 400 || event.payload.status === 0) {
          items.push({ kind: 'notice', key, tone: 'warning', text: bounded(`The model provider ${event.payload.problem ?? `answered HTTP ${event.payload.status}`}`) });
        }
        break;
      case 'usage':
      case 'tool_refused':
      case 'tool_drained':
        // Not shown in the chat.
        break;
      default:
        event satisfies never;
    }
    // A turn that reported what it used gets a line under it.
    if (turn !== null && (turn.tokensFrom !== null || turn.costUsd !== null)) {
      usageTotal = addTurn(usageTotal, turn);
      items.push({ kind: 'usage', key: `u${view.seq}`, text: `Turn: ${describeUsage(turn.tokens, turn.costUsd)}` });
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
