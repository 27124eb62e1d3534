/**
 * How `ward` prints journal events: one line per event for `ward replay`, the live view for
 * `ward run`. Each event is parsed with its schema (common/events.ts); one that does not parse
 * is printed as unreadable with its stored type, never guessed at.
 */
import { escapeForDisplay, escapeOneLine } from '../../common/display.js';
import { readJournalEvent, type EventOf, type JournalEventBody, type UnreadableEvent } from '../../common/events.js';
import { byToolCalls, changesSummary, conversationRewindSummary, perCallOffLine, rewindSummary } from '../../common/file-changes.js';
import { auditSinkLine, decisionParts, elicitationParts, type WordPart } from '../../common/journal-words.js';
import { toolErrorSentence } from '../../common/tool-error.js';
import { addTurn, dollars, NO_USAGE, totalLine, UsageTally, type TurnUsage } from '../../common/usage.js';
import type { JournalEvent } from '../app/conversations.js';

const MAX_SUMMARY = 200;

type Readable = JournalEventBody | UnreadableEvent;

function oneLine(text: string, max = MAX_SUMMARY): string {
  return escapeOneLine(text, max);
}

function formatBytes(n: number): string {
  return n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

function outcome(call: { ok: boolean; errorCode: string | null }): string {
  return call.ok ? 'ok' : `error${call.errorCode === null ? '' : ` (${oneLine(call.errorCode, 40)})`}`;
}

function decisionLine({ payload }: EventOf<'permission_decision'>): string {
  const what = payload.command === undefined ? oneLine(payload.value ?? '', 160) : `\`${oneLine(payload.command, 2_000)}\``;
  return `${payload.decision === 'allow' ? 'allowed' : 'denied'} ${oneLine(payload.tool)} ${what}: ${oneLine(payload.reason)}`;
}

/** Ward's words as they are, everything else escaped onto the line and quoted, as a command is. */
function wordsLine(parts: readonly WordPart[]): string {
  return parts.map((part) => ('text' in part ? part.text : `\`${oneLine(part.foreign, 2_000)}\``)).join('');
}

function retryLine({ payload }: EventOf<'model_retry'>): string {
  const cause = payload.status === null ? `no answer (${oneLine(payload.error, 40)})` : `HTTP ${payload.status} (${oneLine(payload.error, 40)})`;
  return `the model provider gave ${cause}; retry ${payload.attempt} of ${payload.maxRetries} in ${Math.max(1, Math.round(payload.delayMs / 1000))} s`;
}

/**
 * A turn's tokens and its own cost, one number: unknown without the turn before it (the CLI
 * reports a running total per session) or for a model the CLI has no prices for. Totals are
 * shown once, at the end.
 */
function usageSummary({ payload }: EventOf<'usage'>, turn: TurnUsage | null): string {
  return `turn: ${payload.inputTokens} in / ${payload.outputTokens} out tokens, ${turn?.costUsd == null ? 'cost unknown' : dollars(turn.costUsd)}`;
}

/** One compact summary per event. */
function summarize(event: Readable, turn: TurnUsage | null = null): string {
  switch (event.type) {
    case 'user_prompt':
    case 'assistant_text':
    case 'assistant_delta':
      return oneLine(event.payload.text);
    case 'tool_call':
      return `→ ${oneLine(event.payload.tool)} ${oneLine(JSON.stringify(event.payload.arguments) ?? 'null', 120)}`;
    case 'tool_result': {
      const result = event.payload;
      // A failed call says why (the CLI's sentence, without its markup), not only that it failed.
      const reason = 'preview' in result && !result.ok ? toolErrorSentence(result.preview) : '';
      return `← ${oneLine(result.tool ?? '(unknown tool)')} ${outcome(result)} ${formatBytes(result.bytes)} ${Math.round(result.durationMs)} ms${'delivered' in result ? ' (never reached the model)' : ''}${reason === '' ? '' : `: ${oneLine(reason)}`}`;
    }
    case 'tool_refused':
      return `✗ ${oneLine(event.payload.tool)} refused: ${oneLine(event.payload.reason)}`;
    case 'tool_drained':
      return event.payload.cause === 'not_asked_by_the_cli'
        ? `! ${oneLine(event.payload.tool)} was called with the run's capability by something other than the CLI: ${outcome(event.payload)} ${Math.round(event.payload.durationMs)} ms`
        : `⋯ ${oneLine(event.payload.tool)} finished after the CLI stopped waiting for it: ${outcome(event.payload)} ${Math.round(event.payload.durationMs)} ms`;
    case 'usage':
      return usageSummary(event, turn);
    case 'run_started': {
      const { agent, agentVersion, model, session } = event.payload;
      return `${oneLine(agent)}@${agentVersion} ${oneLine(model)} (${session} session)`;
    }
    case 'run_stopping':
      return `stopping: ${oneLine(event.payload.reason)}`;
    case 'run_finished':
      return `${event.payload.state}${event.payload.reason === null ? '' : `: ${oneLine(event.payload.reason, 400)}`}`;
    case 'run_reconciled':
      return `reconciled as ${event.payload.state}: ${oneLine(event.payload.note)}`;
    case 'diagnostic':
      return `${event.payload.reason}: ${oneLine(event.payload.detail)}`;
    case 'model_call': {
      const { status, problem, durationMs, usage } = event.payload;
      const outcomeText = problem !== null ? `failed: ${oneLine(problem)}` : `HTTP ${status}`;
      return `${outcomeText} in ${Math.round(durationMs)} ms${usage === null ? '' : ` (${usage.inputTokens} in / ${usage.outputTokens} out tokens)`}`;
    }
    case 'model_retry':
      return retryLine(event);
    case 'audit_sink':
      return oneLine(auditSinkLine(event), 700);
    case 'model_substituted':
      return `the CLI asked the provider for ${oneLine(event.payload.requested, 200)}, not the run's model ${oneLine(event.payload.runModel, 200)} (the pinned CLI replaces some model names with others)`;
    case 'provider_error':
      return `the model call failed (${oneLine(event.payload.error, 40)}): ${oneLine(event.payload.text)}`;
    case 'permission_decision':
      return wordsLine(decisionParts(event));
    case 'elicitation_requested':
    case 'elicitation_answered':
    case 'elicitation_refused':
      return wordsLine(elicitationParts(event));
    case 'files_changed':
      return changesSummary(event.payload.changes) + oneLine(byToolCalls(event.payload.toolUseIds), 2_000);
    case 'files_untracked':
      return `changes not tracked for this run: ${oneLine(event.payload.reason)}`;
    case 'files_per_call_off':
      return oneLine(perCallOffLine(event.payload.reason));
    case 'files_rewound':
      return rewindSummary(event.payload);
    case 'conversation_rewound':
      return conversationRewindSummary(event.payload);
    case 'unreadable':
      return `unreadable event: ${oneLine(event.payload.problem)}`;
    default:
      return event satisfies never;
  }
}

/**
 * One human line per journal event: `#seq time type summary` (an unreadable event keeps its
 * stored type). A bundle's line may hold anything in any field: each is escaped onto this line.
 */
export function formatEvent(event: JournalEvent, parsed: Readable = readJournalEvent(event.type, event.payload), turn: TurnUsage | null = null): string {
  const type = parsed.type === 'unreadable' ? oneLine(parsed.payload.storedType, 64) : parsed.type;
  return `#${oneLine(String(event.seq), 20)} ${oneLine(String(event.createdAt).slice(11, 23), 12)} ${type}  ${summarize(parsed, turn)}`;
}

/**
 * A conversation as `ward replay` and `ward review` print it, one line per event. People read
 * streamed text once: deltas are shown only when no assistant_text completes them (a turn
 * stopped mid-answer), joined into one line. Usage lines carry the turn's own cost.
 */
export class EventPrinter {
  private partial: { first: JournalEvent; deltas: EventOf<'assistant_delta'>[] } | null = null;
  private readonly usage: UsageTally;
  private total = NO_USAGE;

  /** `fromStart` false when printing from a cursor: the first turn's cost is then unknown. */
  constructor(
    private readonly write: (line: string) => void,
    private readonly fromStart = true,
  ) {
    this.usage = new UsageTally(fromStart);
  }

  push(event: JournalEvent): void {
    const parsed = readJournalEvent(event.type, event.payload);
    const turn = this.usage.add(event.runId, event.createdAt, parsed);
    if (turn !== null) this.total = addTurn(this.total, turn);
    if (parsed.type === 'assistant_delta') {
      this.partial ??= { first: event, deltas: [] };
      this.partial.deltas.push(parsed);
      return;
    }
    if (parsed.type === 'assistant_text') this.partial = null;
    this.end();
    this.write(formatEvent(event, parsed, parsed.type === 'usage' ? this.usage.current(event.runId) : null));
  }

  /** Prints what is held back, then the turns' total (the one place a total is shown). */
  finish(): void {
    this.end();
    for (const turn of this.usage.unfinished()) this.total = addTurn(this.total, turn);
    if (this.total.turns > 0) this.write(totalLine(this.total, this.fromStart ? 'Total' : 'Total of the turns shown'));
  }

  /** Prints what is held back (deltas no final text completed). */
  private end(): void {
    if (this.partial === null) return;
    const { first, deltas } = this.partial;
    this.partial = null;
    this.write(formatEvent(first, { type: 'assistant_delta', payload: { text: deltas.map((delta) => delta.payload.text).join(''), messageIndex: deltas[0]!.payload.messageIndex } }));
  }
}

/** What the live view already printed of the text block being streamed. */
export interface StreamedText {
  text: string;
}

export function newStreamedText(): StreamedText {
  return { text: '' };
}

const unbounded = (text: string) => escapeForDisplay(text, Number.MAX_SAFE_INTEGER);

/**
 * The live view of `ward run`: the model's text as it arrives (deltas as they come, then only
 * the part of the final text not yet printed; escaped, unbounded), the tool timeline and
 * problems as short lines. Null for events the live view does not show.
 */
export function formatLive(event: JournalEvent, streamed: StreamedText = newStreamedText()): { stream: 'stdout' | 'stderr'; text: string } | null {
  const parsed = readJournalEvent(event.type, event.payload);
  switch (parsed.type) {
    case 'assistant_delta': {
      const { text } = parsed.payload;
      streamed.text += text;
      return { stream: 'stdout', text: unbounded(text) };
    }
    case 'assistant_text': {
      const { text } = parsed.payload;
      const printed = streamed.text;
      streamed.text = '';
      // The final text is authoritative: it normally just completes what streamed.
      if (printed === '') return { stream: 'stdout', text: `${unbounded(text)}\n` };
      return { stream: 'stdout', text: text.startsWith(printed) ? `${unbounded(text.slice(printed.length))}\n` : `\n${unbounded(text)}\n` };
    }
    case 'tool_call':
    case 'tool_result':
    case 'tool_refused':
    case 'tool_drained':
      return { stream: 'stdout', text: `  ${summarize(parsed)}\n` };
    case 'run_finished': {
      // A stop cut a streamed block short: end its line before the outcome is printed.
      const open = streamed.text !== '';
      streamed.text = '';
      return open ? { stream: 'stdout', text: '\n' } : null;
    }
    case 'diagnostic':
    case 'audit_sink':
    case 'run_stopping':
    case 'model_retry':
    case 'model_substituted':
    case 'provider_error':
    case 'elicitation_answered':
    case 'elicitation_refused':
      return { stream: 'stderr', text: `ward: ${summarize(parsed)}\n` };
    case 'unreadable':
      return { stream: 'stderr', text: `ward: ${oneLine(parsed.payload.storedType, 64)}: ${summarize(parsed)}\n` };
    case 'model_call':
      // The provider failing is news (the CLI may retry quietly for minutes); its answers are not.
      return parsed.payload.status >= 400 || parsed.payload.status === 0 ? { stream: 'stderr', text: `ward: model provider ${summarize(parsed)}\n` } : null;
    case 'permission_decision':
      // Denials are news to the person at the terminal; allows are in `ward permissions`.
      return parsed.payload.decision === 'deny' ? { stream: 'stderr', text: `ward: ${decisionLine(parsed)}\n` } : null;
    default:
      return null;
  }
}
