/**
 * One reducer per journal event type: how that event changes what the chat shows. The map is
 * typed against the event union (common/events.ts), so an event type added there is a compile
 * error here until it is handled. Events arrive parsed (incoming-events.ts); every piece of
 * model, tool or provider text is escaped here, once, with the one window escaper
 * (common/display.ts): answers, prompts, tool names, arguments and results alike (P1, U3).
 * Answers are kept whole (the list is virtualized); only tool texts are cut, where they are shown.
 */
import { escapeForWindow, escapeLineForWindow } from '../../../common/display.js';
import type { EventOf, JournalEventBody, UnreadableEvent } from '../../../common/events.js';
import { changesSummary, conversationRewindSummary, netChanges, perCallOffLine, rewindSummary } from '../../../common/file-changes.js';
import { auditSinkLine } from '../../../common/journal-words.js';
import { toolErrorSentence } from '../../../common/tool-error.js';
import { shownToolName, type PermissionNote, type RunStatus, type TimelineItem, type ToolItem } from './timeline.js';

/** What the renderer folds: an event main parsed, or one it found unreadable. */
export type ShownEvent = JournalEventBody | UnreadableEvent;
type ShownType = ShownEvent['type'];

/** A batch's working copy: reducers change it in place, the batch is then one new state. */
export interface Fold {
  readonly items: TimelineItem[];
  run: RunStatus | null;
}

/** Where an event sits: the row key it makes, its run, when it was written. */
export interface EventPlace {
  readonly key: string;
  readonly runId: string | null;
  readonly at: string;
}

type Reducer<T extends ShownType> = (fold: Fold, event: Extract<ShownEvent, { type: T }>, place: EventPlace) => void;

const SUMMARY_CHARS = 120;
/** How far back a permission check looks for the open call it is about. */
const OPEN_TOOL_LOOKBACK = 200;
/** How far back a call looks for a check journaled before it. */
const EARLY_CHECK_LOOKBACK = 20;

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

/** What a tool entry shows of its result: the preview main journaled, else what is known of it. */
function toolOutput(result: EventOf<'tool_result'>['payload']): string {
  // The CLI's own failure (tool_error) says nothing a sentence does not; Ward's codes name the cause.
  const code = result.errorCode === null || result.errorCode === 'tool_error' ? '' : `${result.errorCode}: `;
  if ('delivered' in result) return `${code}the run ended before the result reached the model (${result.bytes} bytes)`;
  // A failed call reads as its sentence, without the CLI's <tool_use_error> markup.
  const preview = result.ok ? result.preview : toolErrorSentence(result.preview);
  if (preview !== '') return `${code}${escapeForWindow(preview)}${result.previewTruncated ? `… (${result.bytes} bytes in all)` : ''}`;
  return result.errorCode ?? `${result.bytes} bytes returned to the model`;
}

const joined = (text: string) => `${text}${text === '' || text.endsWith('\n') ? '' : '\n\n'}`;

/** The newest tool entry of the run still open for `tool` (a permission check is about it). */
function openTool(items: readonly TimelineItem[], runId: string | null, tool: string): number {
  for (let index = items.length - 1; index >= 0 && index >= items.length - OPEN_TOOL_LOOKBACK; index--) {
    const item = items[index]!;
    if (item.kind === 'tool' && item.runId === runId && item.tool === tool && item.output === null) return index;
  }
  return -1;
}

function findTool(items: readonly TimelineItem[], callId: string): number {
  for (let index = items.length - 1; index >= 0; index--) {
    const item = items[index]!;
    if (item.kind === 'tool' && item.callId === callId) return index;
  }
  return -1;
}

/** The cards of the calls a per-call `files_changed` is tied to say how many files they changed. */
function markChangingCalls({ items }: Fold, toolUseIds: readonly string[], count: number): void {
  for (const id of toolUseIds) {
    const index = findTool(items, id);
    const item = items[index];
    if (item?.kind !== 'tool') continue;
    items[index] = { ...item, changedFiles: { count: (item.changedFiles?.count ?? 0) + count, shared: item.changedFiles?.shared === true || toolUseIds.length > 1 } };
  }
}

const capitalized = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

type Tone = Extract<TimelineItem, { kind: 'notice' }>['tone'];
const notice = (fold: Fold, { key, runId }: EventPlace, tone: Tone, text: string) => void fold.items.push({ kind: 'notice', key, runId, tone, text });

/** How far back a model failure or retry looks for its run's line. */
const MODEL_LINE_LOOKBACK = 50;

/** The run's one line about failed model calls and retries (its index and retry count), or null. */
function modelLine({ items }: Fold, runId: string | null): { readonly index: number; readonly retries: number } | null {
  for (let index = items.length - 1; index >= 0 && index >= items.length - MODEL_LINE_LOOKBACK; index--) {
    const item = items[index]!;
    if (item.kind === 'notice' && item.runId === runId && item.modelRetries !== undefined) return { index, retries: item.modelRetries };
  }
  return null;
}

/**
 * A failed model call and the CLI's retries of it are one line per run, updated in place
 * ("Retrying the model (4 of 10) after HTTP 500"), not two new rows per attempt.
 */
function setModelLine(fold: Fold, place: EventPlace, line: ReturnType<typeof modelLine>, tone: Tone, text: string, retries?: number): void {
  if (line === null) return void fold.items.push({ kind: 'notice', key: place.key, runId: place.runId, tone, text, modelRetries: retries ?? 0 });
  const item = fold.items[line.index] as Extract<TimelineItem, { kind: 'notice' }>;
  fold.items[line.index] = { ...item, tone, text, modelRetries: retries ?? line.retries };
}
/** Not shown in the chat: usage becomes the turn's line, a request for input is shown where approvals are. */
const nothing = () => undefined;

const assistantDelta: Reducer<'assistant_delta'> = ({ items }, event, { key, runId, at }) => {
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
};

const assistantText: Reducer<'assistant_text'> = ({ items }, event, { key, runId, at }) => {
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
};

const toolCall: Reducer<'tool_call'> = ({ items }, event, { key, runId, at }) => {
  const { toolUseId, arguments: args } = event.payload;
  const tool = escapeLineForWindow(event.payload.tool, 200);
  // A check journaled before its call arrived (the stream and the approval race) joins the card.
  const permissions: PermissionNote[] = [];
  for (let index = items.length - 1; index >= 0 && index >= items.length - EARLY_CHECK_LOOKBACK; index--) {
    const item = items[index]!;
    if (item.kind === 'notice' && item.permission?.tool === tool && item.runId === runId) {
      permissions.unshift({ decision: item.tone === 'warning' ? 'deny' : 'allow', text: item.text });
      items.splice(index, 1);
      break;
    }
  }
  items.push({ kind: 'tool', key, runId, at, callId: toolUseId, tool, args: escapeForWindow(stringify(args)), summary: summarize(args), status: 'running', output: null, durationMs: null, permissions });
};

const toolResult: Reducer<'tool_result'> = ({ items }, { payload: result }, { key, runId, at }) => {
  const done = { status: result.ok ? ('ok' as const) : ('error' as const), output: toolOutput(result), durationMs: result.durationMs };
  const index = findTool(items, result.toolUseId);
  if (index < 0) {
    items.push({ kind: 'tool', key, runId, at, callId: result.toolUseId, tool: escapeLineForWindow(result.tool ?? 'tool', 200), args: '', summary: '', permissions: [], ...done });
    return;
  }
  const item = items[index] as ToolItem;
  // A call a permission check refused failed because of the answer, not the tool: no error card.
  const denied = !result.ok && item.permissions.some((note) => note.decision === 'deny');
  items[index] = { ...item, ...done, ...(denied ? { status: 'denied' as const, output: null } : {}) };
};

const runFinished: Reducer<'run_finished'> = (fold, { payload: { state, reason } }, place) => {
  const { items } = fold;
  const { runId } = place;
  fold.run = { id: runId ?? fold.run?.id ?? '', state, reason };
  // Calls the run never reported back on: what they did is unknown.
  for (let index = items.length - 1; index >= 0; index--) {
    const item = items[index]!;
    if (item.kind === 'user' && item.runId !== runId) break;
    if (item.kind === 'tool' && item.runId === runId && item.status === 'running') items[index] = { ...item, status: 'unknown' };
  }
  const shownReason = reason ? `: ${escapeForWindow(reason)}` : '';
  if (state === 'stopped') notice(fold, place, 'stopped', 'Stopped');
  else if (state === 'failed') notice(fold, place, 'error', `The run failed${shownReason}`);
  else if (state === 'uncertain') notice(fold, place, 'warning', `The outcome of this run is unknown${shownReason}`);
};

const ANSWERED_BY: Record<EventOf<'permission_decision'>['payload']['answerer']['by'], string> = {
  person: 'you',
  rule: 'a grant',
  timeout: 'no answer in time',
  policy: 'the admin policy',
  no_one: 'Ward',
  refused: 'Ward',
};

const permissionDecision: Reducer<'permission_decision'> = ({ items }, { payload }, { key, runId }) => {
  const { decision, reason, answerer } = payload;
  const tool = escapeLineForWindow(shownToolName(payload.tool), 200);
  const byPerson = answerer.by === 'person';
  // "Denied by you" says it all; Ward's reason ("denied by the person") would only repeat it.
  const text = byPerson && decision === 'deny' ? 'Denied by you' : `${decision === 'allow' ? 'Allowed' : 'Denied'} by ${ANSWERED_BY[answerer.by]} (${escapeForWindow(reason)})`;
  const index = openTool(items, runId, tool);
  if (index >= 0) {
    const item = items[index] as ToolItem;
    items[index] = { ...item, permissions: [...item.permissions, { decision, text, ...(byPerson ? { byPerson } : {}) }] };
  } else {
    items.push({ kind: 'notice', key, runId, tone: decision === 'allow' ? 'info' : 'warning', text: `Permission ${decision} for ${tool}: ${text}`, permission: { tool } });
  }
};

const ELICITATION_BY: Record<EventOf<'elicitation_answered'>['payload']['by'], string> = { person: '', timeout: ' (no answer in time)', no_one: ' (no one to ask)', ended: ' (the run ended)' };
const ELICITATION_OUTCOME: Record<EventOf<'elicitation_answered'>['payload']['action'], string> = { accept: 'answered', decline: 'declined', cancel: 'cancelled' };

export const REDUCERS: { readonly [T in ShownType]: Reducer<T> } = {
  run_started: (fold, _event, { runId }) => {
    if (runId !== null) fold.run = { id: runId, state: 'running', reason: null };
  },
  user_prompt: ({ items }, { payload: { text } }, { key, runId, at }) => void items.push({ kind: 'user', key, runId, at, text: escapeForWindow(text), prompt: text }),
  assistant_delta: assistantDelta,
  assistant_text: assistantText,
  tool_call: toolCall,
  tool_result: toolResult,
  run_stopping: (fold, _event, { runId }) => {
    if (fold.run !== null && (runId === null || runId === fold.run.id)) fold.run = { ...fold.run, state: 'stopping' };
  },
  run_finished: runFinished,
  run_reconciled: (fold, { payload: { state, note } }, place) => {
    fold.run = { id: place.runId ?? fold.run?.id ?? '', state, reason: note };
    notice(fold, place, 'info', `Reconciled as ${state}: ${escapeForWindow(note)}`);
  },
  permission_decision: permissionDecision,
  diagnostic: (fold, { payload }, place) => notice(fold, place, 'warning', escapeForWindow(payload.detail)),
  unreadable: (fold, { payload }, place) => notice(fold, place, 'warning', `Unreadable event: ${escapeLineForWindow(payload.storedType, 64)}`),
  model_call: (fold, { payload: { status, problem } }, place) => {
    const failed = status >= 400 || status === 0;
    const line = modelLine(fold, place.runId);
    // Only a provider that failed is news in the chat; an answer after retries closes their line.
    if (failed) setModelLine(fold, place, line, 'warning', `The model provider ${escapeForWindow(problem ?? `answered HTTP ${status}`)}`);
    else if (line !== null) setModelLine(fold, place, line, 'info', `The model answered after ${line.retries === 0 ? 'a failed call' : line.retries === 1 ? 'one retry' : `${line.retries} retries`}`);
  },
  model_retry: (fold, { payload: { attempt, maxRetries, status } }, place) =>
    setModelLine(fold, place, modelLine(fold, place.runId), 'info', escapeLineForWindow(`Retrying the model (${attempt} of ${maxRetries})${status === null ? '' : ` after HTTP ${status}`}`, 200), attempt),
  model_substituted: (fold, { payload }, place) =>
    notice(fold, place, 'warning', escapeLineForWindow(`The CLI asked the provider for ${payload.requested}, not this chat's model ${payload.runModel}.`, 500)),
  audit_sink: (fold, event, place) => notice(fold, place, event.payload.state === 'failing' ? 'warning' : 'info', escapeLineForWindow(auditSinkLine(event), 600)),
  provider_error: (fold, { payload }, place) => notice(fold, place, 'warning', escapeLineForWindow(`The model call failed: ${payload.text}`, 500)),
  elicitation_answered: (fold, { payload: { server, action, by } }, place) =>
    notice(fold, place, 'info', escapeLineForWindow(`The server ${server} asked for input: ${ELICITATION_OUTCOME[action]}${ELICITATION_BY[by]}`, 300)),
  elicitation_refused: (fold, { payload }, place) => notice(fold, place, 'warning', escapeLineForWindow(`Ward refused a request for input from ${payload.server}: ${payload.reason}`, 500)),
  files_changed: (fold, { payload }, place) => {
    // A run's changes are journaled in parts (one per tool call where that is on): they show as one
    // set, opened from its first event, as main's change list groups them.
    const at = fold.items.findLastIndex((item) => item.kind === 'changes');
    const last = fold.items[at];
    if (last?.kind === 'changes' && !last.rewind && last.runId === place.runId) {
      const changes = [...last.changes, ...payload.changes];
      // Each file counted once, as main's change list shows it.
      fold.items[at] = { ...last, changes, text: changesSummary(netChanges([{ changes }]).map((net) => net.change)) };
    } else fold.items.push({ kind: 'changes', key: place.key, runId: place.runId, seq: Number(place.key.slice(1)), changes: payload.changes, rewind: false, text: changesSummary(payload.changes) });
    markChangingCalls(fold, payload.toolUseIds ?? [], payload.changes.length);
  },
  files_per_call_off: (fold, { payload }, place) => notice(fold, place, 'info', `${capitalized(perCallOffLine(escapeLineForWindow(payload.reason, 500)))}`),
  files_untracked: (fold, { payload }, place) => notice(fold, place, 'warning', `Changes not tracked for this run: ${escapeLineForWindow(payload.reason, 500)}`),
  files_rewound: (fold, { payload }, place) =>
    void fold.items.push({ kind: 'changes', key: place.key, runId: place.runId, seq: Number(place.key.slice(1)), changes: payload.changes, rewind: true, text: rewindSummary(payload) }),
  conversation_rewound: (fold, { payload }, place) => {
    // Ranges are cumulative: an undo brings items back, so every item is marked afresh.
    const rewound = (key: string) => payload.rewound.some((range) => Number(key.slice(1)) >= range.from && Number(key.slice(1)) <= range.to);
    fold.items.forEach((item, index) => (fold.items[index] = { ...item, rewound: rewound(item.key) }));
    fold.items.push({ kind: 'notice', key: place.key, runId: place.runId, tone: 'info', text: conversationRewindSummary(payload), rewindSeq: Number(place.key.slice(1)) });
  },
  usage: nothing,
  tool_refused: nothing,
  tool_drained: nothing,
  elicitation_requested: nothing,
};

/** Applies one event with the reducer of its type. */
export function reduce(fold: Fold, event: ShownEvent, place: EventPlace): void {
  // Each event meets the reducer of its own type; TypeScript cannot follow that pairing through the map.
  (REDUCERS[event.type] as Reducer<ShownType>)(fold, event, place);
}
