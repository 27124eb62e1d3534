/**
 * Folds journal events into what the chat shows. Pure and incremental: the view state is a
 * function of the events up to `lastSeq`, so a reload replays from 0 and a resubscribe continues
 * from `lastSeq` (J1). Payloads are read defensively: the journal is data, not trusted code.
 */
import type { JournalEventView, RunState } from '../../../preload/contract.js';
import { escapeInvisible } from '../../../preload/display.js';

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
      readonly startedAt: string;
    }
  | { readonly kind: 'notice'; readonly key: string; readonly tone: 'info' | 'stopped' | 'error' | 'warning'; readonly text: string };

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
}

export const EMPTY_CONVERSATION: ConversationState = { items: [], lastSeq: 0, run: null };

const MAX_SHOWN_CHARS = 4_000;

type Json = Record<string, unknown>;
const asObject = (value: unknown): Json => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {});
const firstString = (payload: Json, ...keys: string[]): string | null => {
  for (const key of keys) if (typeof payload[key] === 'string') return payload[key] as string;
  return null;
};
const firstNumber = (payload: Json, ...keys: string[]): number | null => {
  for (const key of keys) if (typeof payload[key] === 'number' && Number.isFinite(payload[key])) return payload[key] as number;
  return null;
};

function bounded(text: string): string {
  return text.length > MAX_SHOWN_CHARS ? `${text.slice(0, MAX_SHOWN_CHARS)}… (${text.length - MAX_SHOWN_CHARS} more characters)` : text;
}


function stringify(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value, null, 2) ?? '';
  } catch {
    return String(value);
  }
}

const FINAL_STATES: readonly RunState[] = ['succeeded', 'failed', 'stopped', 'uncertain'];

function runState(value: string | null): RunState | null {
  switch (value) {
    case 'admitted':
    case 'running':
    case 'stopping':
    case 'stopped':
    case 'succeeded':
    case 'failed':
    case 'uncertain':
      return value;
    case 'cancelled':
    case 'canceled':
      return 'stopped';
    default:
      return null;
  }
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

  for (const event of fresh) {
    lastSeq = event.seq;
    const payload = asObject(event.payload);
    const key = `e${event.seq}`;
    switch (event.type) {
      case 'run_started': {
        const prompt = firstString(payload, 'prompt', 'text');
        if (prompt !== null) items.push({ kind: 'user', key, text: bounded(prompt) });
        if (event.runId !== null) run = { id: event.runId, state: 'running', reason: null };
        break;
      }
      case 'user_prompt':
      case 'prompt': {
        const text = firstString(payload, 'text', 'prompt');
        if (text !== null) items.push({ kind: 'user', key, text: bounded(text) });
        break;
      }
      case 'assistant_delta': {
        const text = firstString(payload, 'text') ?? '';
        const messageIndex = firstNumber(payload, 'messageIndex') ?? 0;
        const last = items[items.length - 1];
        if (last?.kind === 'assistant' && last.runId === event.runId && last.streaming?.messageIndex === messageIndex) {
          // Past the display bound the rest is not shown anyway; the final text settles it.
          if (last.text.length < MAX_SHOWN_CHARS) items[items.length - 1] = { ...last, text: bounded(`${last.text}${text}`) };
        } else if (last?.kind === 'assistant' && last.runId === event.runId) {
          const before = `${last.text}${last.text.endsWith('\n') ? '' : '\n\n'}`;
          items[items.length - 1] = { ...last, text: bounded(`${before}${text}`), streaming: { messageIndex, before } };
        } else {
          items.push({ kind: 'assistant', key, runId: event.runId, text: bounded(text), streaming: { messageIndex, before: '' } });
        }
        break;
      }
      case 'assistant_text': {
        const text = firstString(payload, 'text') ?? '';
        const last = items[items.length - 1];
        if (last?.kind === 'assistant' && last.runId === event.runId && last.streaming != null) {
          // The final text is authoritative: it replaces what the deltas built up.
          items[items.length - 1] = { ...last, text: bounded(`${last.streaming.before}${text}`), streaming: null };
        } else if (last?.kind === 'assistant' && last.runId === event.runId) {
          items[items.length - 1] = { ...last, text: bounded(`${last.text}${last.text.endsWith('\n') ? '' : '\n\n'}${text}`) };
        } else {
          items.push({ kind: 'assistant', key, runId: event.runId, text: bounded(text) });
        }
        break;
      }
      case 'tool_call': {
        const callId = firstString(payload, 'toolUseId', 'callId', 'id') ?? key;
        const tool = firstString(payload, 'name', 'tool') ?? 'tool';
        items.push({
          kind: 'tool',
          key,
          callId,
          tool,
          args: bounded(stringify(payload.input ?? payload.arguments)),
          status: 'running',
          output: null,
          durationMs: null,
          startedAt: event.createdAt,
        });
        toolIndex.map?.set(callId, items.length - 1);
        break;
      }
      case 'tool_result': {
        const callId = firstString(payload, 'toolUseId', 'callId', 'id') ?? '';
        const index = findTool(callId);
        const isError = payload.isError === true || payload.ok === false || typeof payload.error === 'string' || typeof payload.errorCode === 'string';
        const errorCode = firstString(payload, 'errorCode');
        const bytes = firstNumber(payload, 'bytes');
        const preview = firstString(payload, 'preview');
        const output =
          preview !== null && preview !== ''
            ? `${errorCode !== null ? `${errorCode}: ` : ''}${escapeInvisible(preview)}${payload.previewTruncated === true ? `… (${bytes ?? 'more'} bytes in all)` : ''}`
            : (firstString(payload, 'text', 'result', 'message', 'error') ??
              (errorCode !== null ? errorCode : bytes !== null ? `${bytes} bytes returned to the model` : stringify(payload.content)));
        const measured = firstNumber(payload, 'durationMs');
        if (index === undefined) {
          items.push({ kind: 'tool', key, callId, tool: firstString(payload, 'name', 'tool') ?? 'tool', args: '', status: isError ? 'error' : 'ok', output: bounded(output), durationMs: measured, startedAt: event.createdAt });
          break;
        }
        const entry = items[index] as Extract<TimelineItem, { kind: 'tool' }>;
        const elapsed = Date.parse(event.createdAt) - Date.parse(entry.startedAt);
        items[index] = { ...entry, status: isError ? 'error' : 'ok', output: bounded(output), durationMs: measured ?? (Number.isFinite(elapsed) ? Math.max(0, elapsed) : null) };
        break;
      }
      case 'run_stopping':
      case 'stop_requested': {
        if (run !== null && (event.runId === null || event.runId === run.id)) run = { ...run, state: 'stopping' };
        break;
      }
      case 'run_finished':
      case 'run_reconciled': {
        const state = runState(firstString(payload, 'state', 'outcome', 'status')) ?? 'failed';
        const reason = firstString(payload, 'reason', 'message', 'note') ?? (Array.isArray(payload.errors) ? payload.errors.map(String).join('; ') : null);
        run = { id: event.runId ?? run?.id ?? '', state, reason };
        if (event.type === 'run_reconciled') items.push({ kind: 'notice', key, tone: 'info', text: bounded(`Reconciled as ${state}${reason ? `: ${reason}` : ''}`) });
        else if (state === 'stopped') items.push({ kind: 'notice', key, tone: 'stopped', text: 'Stopped' });
        else if (state === 'failed') items.push({ kind: 'notice', key, tone: 'error', text: `The run failed${reason ? `: ${bounded(reason)}` : ''}` });
        else if (state === 'uncertain') items.push({ kind: 'notice', key, tone: 'warning', text: `The outcome of this run is unknown${reason ? `: ${bounded(reason)}` : ''}` });
        break;
      }
      case 'permission_decision': {
        const tool = firstString(payload, 'tool', 'toolName', 'value') ?? 'a tool';
        const decision = firstString(payload, 'decision', 'behavior', 'outcome') ?? 'decided';
        const why = firstString(payload, 'reason', 'why');
        items.push({ kind: 'notice', key, tone: decision.startsWith('allow') ? 'info' : 'warning', text: bounded(`Permission ${decision} for ${tool}${why ? ` (${why})` : ''}`) });
        break;
      }
      case 'diagnostic': {
        const detail = firstString(payload, 'detail', 'message', 'reason') ?? 'diagnostic';
        items.push({ kind: 'notice', key, tone: 'warning', text: bounded(detail) });
        break;
      }
      default:
        // usage and event types this view does not show.
        break;
    }
  }
  return { items, lastSeq, run };
}

/** Combines the journal's view of the run with the store's authoritative state (from conversations.get). */
export function mergeRunState(journalRun: RunStatus | null, storeRun: RunStatus | null): RunStatus | null {
  if (storeRun === null) return journalRun;
  if (journalRun !== null && journalRun.id === storeRun.id && FINAL_STATES.includes(journalRun.state)) return journalRun;
  return storeRun;
}
