/**
 * Readable transcripts of a conversation, for sharing: Markdown in which everything not Ward's own
 * is a code span or a fenced block, and HTML that is one self-contained page with no script, no
 * remote loads and every such string escaped (as in the desktop: invisible characters shown as
 * escapes, markup as text). A transcript is not evidence; the signed bundle is.
 */
import { escapeInvisible, escapeOneLine } from '../../common/display.js';
import type { FileChange, JournalEventBody, UnreadableEvent } from '../../common/events.js';
import { auditSinkLine, decisionParts, elicitationParts, type WordPart } from '../../common/journal-words.js';
import { byToolCalls, changesSummary, conversationRewindSummary, perCallOffLine, rewindSummary } from '../../common/file-changes.js';
import { addTurn, describeUsage, NO_USAGE, totalLine, UsageTally, type TurnUsage, type UsageTotal } from '../../common/usage.js';

export interface TranscriptMeta {
  readonly title: string;
  readonly conversationId: string;
  readonly agent: string;
  readonly exportedAt: string;
  readonly events: number;
  readonly chainHead: string;
  readonly uncertainRuns: readonly string[];
  /** A file change's diff as text (deny-read and unkept bytes named, never shown); none: summaries only. */
  readonly diffOf?: (change: FileChange, seq: number) => string;
  /** The events the conversation was rewound past (its latest `conversation_rewound`): their messages are marked rewound. */
  readonly rewound?: readonly { readonly from: number; readonly to: number }[];
}

export interface TranscriptEvent {
  readonly seq: number;
  readonly runId: string | null;
  readonly createdAt: string;
  readonly event: JournalEventBody | UnreadableEvent;
}

type Entry =
  | { readonly kind: 'user' | 'assistant'; readonly at: string; readonly text: string; readonly cutShort?: boolean; readonly rewound?: boolean }
  | { readonly kind: 'tool'; readonly at: string; readonly tool: string; readonly detail: string }
  | { readonly kind: 'notice'; readonly at: string; readonly text: string }
  | { readonly kind: 'asked'; readonly at: string; readonly parts: readonly WordPart[] }
  | { readonly kind: 'turn'; readonly at: string; readonly usage: TurnUsage }
  | { readonly kind: 'total'; readonly usage: UsageTotal };

/** A header field is a line, not a document: longer ones are cut (the bundle has them whole). */
const MAX_HEADER_CHARS = 1_000;

/** A tool's arguments as people read them, bounded: the bundle has them whole. */
const MAX_ARGUMENTS_CHARS = 4_000;

function argumentsText(value: unknown): string {
  const text = JSON.stringify(value, null, 2) ?? 'null';
  return text.length > MAX_ARGUMENTS_CHARS ? `${text.slice(0, MAX_ARGUMENTS_CHARS)}… (${text.length - MAX_ARGUMENTS_CHARS} more characters)` : text;
}

/** What a person reads of a conversation, in order: streamed text only where no final text completed it. */
/** A file event's changes with their diffs, as one block. */
function filesDetail(summary: string, changes: readonly FileChange[], seq: number, diffOf: TranscriptMeta['diffOf']): string {
  const lines = changes.map((change) => `${change.change} ${change.change === 'renamed' ? `${change.root}/${change.from} -> ` : ''}${change.root}/${change.path}${diffOf === undefined ? '' : `\n${diffOf(change, seq)}`}`);
  return [summary, ...lines].join('\n');
}

/** What a file or rewind event shows: its changes with their diffs, why the run was not tracked, what a conversation rewind did. */
function fileEntry(
  event: Extract<JournalEventBody, { type: 'files_changed' | 'files_untracked' | 'files_per_call_off' | 'files_rewound' | 'conversation_rewound' }>,
  at: string,
  seq: number,
  diffOf: TranscriptMeta['diffOf'],
  toolOf: (toolUseId: string) => string | undefined,
): Entry {
  if (event.type === 'conversation_rewound') return { kind: 'notice', at, text: conversationRewindSummary(event.payload) };
  if (event.type === 'files_untracked') return { kind: 'notice', at, text: `Changes not tracked for this run: ${event.payload.reason}` };
  if (event.type === 'files_per_call_off') return { kind: 'notice', at, text: perCallOffLine(event.payload.reason) };
  const summary = event.type === 'files_changed' ? changesSummary(event.payload.changes) + byToolCalls(event.payload.toolUseIds, toolOf) : rewindSummary(event.payload);
  return { kind: 'tool', at, tool: event.type === 'files_changed' ? 'Files changed' : 'Files rewound', detail: filesDetail(summary, event.payload.changes, seq, diffOf) };
}

/** The one-line notices that need nothing but their own event. */
function noticeText(event: Extract<JournalEventBody, { type: 'run_reconciled' | 'diagnostic' | 'audit_sink' | 'model_substituted' }>): string {
  switch (event.type) {
    case 'run_reconciled':
      return `Reconciled as ${event.payload.state}: ${event.payload.note}`;
    case 'diagnostic':
      return event.payload.detail;
    case 'audit_sink':
      return auditSinkLine(event);
    case 'model_substituted':
      return `The CLI asked the provider for ${event.payload.requested}, not the run's model ${event.payload.runModel}`;
  }
}

function* entries(events: Iterable<TranscriptEvent>, meta: TranscriptMeta): Generator<Entry> {
  const rewound = (seq: number) => (meta.rewound ?? []).some((range) => seq >= range.from && seq <= range.to);
  const usage = new UsageTally();
  let total = NO_USAGE;
  let partial: { runId: string | null; messageIndex: number; at: string; text: string } | null = null;
  const tools = new Map<string, string>(); // which tool each call was, for the changes tied to it
  for (const { seq, runId, createdAt: at, event } of events) {
    const turn = usage.add(runId, at, event);
    if (event.type === 'assistant_delta') {
      if (partial !== null && (partial.runId !== runId || partial.messageIndex !== event.payload.messageIndex)) yield { kind: 'assistant', at: partial.at, text: partial.text, cutShort: true };
      if (partial === null || partial.runId !== runId || partial.messageIndex !== event.payload.messageIndex) partial = { runId, messageIndex: event.payload.messageIndex, at, text: '' };
      partial.text += event.payload.text;
      continue;
    }
    if (event.type === 'assistant_text') partial = null;
    if (partial !== null) {
      yield { kind: 'assistant', at: partial.at, text: partial.text, cutShort: true };
      partial = null;
    }
    switch (event.type) {
      case 'user_prompt':
      case 'assistant_text':
        yield { kind: event.type === 'user_prompt' ? 'user' : 'assistant', at, text: event.payload.text, rewound: rewound(seq) };
        break;
      case 'tool_call':
        tools.set(event.payload.toolUseId, event.payload.tool);
        yield { kind: 'tool', at, tool: event.payload.tool, detail: argumentsText(event.payload.arguments) };
        break;
      case 'tool_result': {
        const result = event.payload;
        const outcome = result.ok ? 'ok' : `error${result.errorCode === null ? '' : ` (${result.errorCode})`}`;
        const shown = 'delivered' in result ? 'the run ended before the model saw this result' : result.preview === '' ? `${result.bytes} bytes` : `${result.preview}${result.previewTruncated ? '…' : ''}`;
        yield { kind: 'tool', at, tool: `${result.tool ?? 'tool'} → ${outcome}`, detail: shown };
        break;
      }
      case 'tool_refused':
        yield { kind: 'notice', at, text: `Tool ${event.payload.tool} refused: ${event.payload.reason}` };
        break;
      case 'permission_decision':
        yield { kind: 'asked', at, parts: decisionParts(event) };
        break;
      case 'elicitation_requested':
      case 'elicitation_answered':
      case 'elicitation_refused':
        yield { kind: 'asked', at, parts: elicitationParts(event) };
        break;
      case 'run_finished':
        if (event.payload.state !== 'succeeded') yield { kind: 'notice', at, text: `Run ${event.payload.state}${event.payload.reason === null ? '' : `: ${event.payload.reason}`}` };
        break;
      case 'run_reconciled':
      case 'diagnostic':
      case 'audit_sink':
      case 'model_substituted':
        yield { kind: 'notice', at, text: noticeText(event) };
        break;
      case 'model_call':
        if (event.payload.status >= 400 || event.payload.status === 0) yield { kind: 'notice', at, text: `The model provider ${event.payload.problem ?? `answered HTTP ${event.payload.status}`}` };
        break;
      case 'files_changed':
      case 'files_untracked':
      case 'files_per_call_off':
      case 'files_rewound':
      case 'conversation_rewound':
        yield fileEntry(event, at, seq, meta.diffOf, (id) => tools.get(id));
        break;
      case 'unreadable':
        yield { kind: 'notice', at, text: `Unreadable event (${event.payload.storedType}): ${event.payload.problem}` };
        break;
      default:
        break;
    }
    if (turn !== null) {
      total = addTurn(total, turn);
      yield { kind: 'turn', at, usage: turn };
    }
  }
  if (partial !== null) yield { kind: 'assistant', at: partial.at, text: partial.text, cutShort: true };
  for (const turn of usage.unfinished()) total = addTurn(total, turn);
  if (total.turns > 0) yield { kind: 'total', usage: total };
}

/** A turn's own cost only: the conversation's total is its own line, at the end. */
function turnLine(entry: Extract<Entry, { kind: 'turn' | 'total' }>): string {
  if (entry.kind === 'total') return totalLine(entry.usage);
  return `Turn: ${describeUsage(entry.usage.tokens, entry.usage.costUsd)}`;
}

function time(at: string): string {
  return at.slice(0, 19).replace('T', ' ');
}

// ---- Markdown ----
// Nothing that came from a model, a tool, a server or a person is Markdown here: one-line fields
// are code spans and everything else is a fenced block, so no viewer makes an image, a link, an
// autolink, HTML, a heading or a table of it. Only Ward's own words are Markdown.

/** A run of backticks longer than any in `text` (at least `min`): a code delimiter it cannot close. */
function backticksBeyond(text: string, min: number): string {
  // Most text holds no backtick: no regex scan for it.
  if (!text.includes('`')) return '`'.repeat(min);
  return '`'.repeat(Math.max(min, ...[...text.matchAll(/`+/g)].map((match) => match[0].length + 1)));
}

/**
 * A field as a code span on one line. Padded with a space each side (which CommonMark drops) when
 * it is empty or starts or ends with a backtick or a space, so the delimiters stay its own.
 */
function codeSpan(text: string): string {
  const shown = escapeOneLine(text, MAX_HEADER_CHARS);
  const ticks = backticksBeyond(shown, 1);
  const pad = shown === '' || /^[` ]|[` ]$/.test(shown) ? ' ' : '';
  return `${ticks}${pad}${shown}${pad}${ticks}`;
}

/** Text as a fenced block whose fence is longer than any backtick run inside, so nothing can close it. */
function fenced(text: string): string {
  const shown = escapeInvisible(text);
  const fence = backticksBeyond(shown, 3);
  return `${fence}\n${shown}\n${fence}`;
}

export function* renderMarkdown(meta: TranscriptMeta, events: Iterable<TranscriptEvent>): Generator<string> {
  yield `# ${codeSpan(meta.title)}\n\n`;
  yield `- Conversation: ${codeSpan(meta.conversationId)}\n- Agent: ${codeSpan(meta.agent)}\n- Exported: ${codeSpan(meta.exportedAt)} · ${meta.events} events · chain head ${codeSpan(meta.chainHead)}\n`;
  if (meta.uncertainRuns.length > 0) yield `- Runs with an unknown outcome: ${meta.uncertainRuns.map(codeSpan).join(', ')}\n`;
  yield '\n> A transcript for reading. The signed `.wardbundle` export of this conversation is the verifiable record.\n';
  for (const entry of entries(events, meta)) {
    switch (entry.kind) {
      case 'user':
      case 'assistant':
        yield `\n### ${entry.kind === 'user' ? 'You' : 'Agent'} · ${codeSpan(time(entry.at))}${entry.cutShort ? ' (cut short)' : ''}${entry.rewound === true ? ' (rewound)' : ''}\n\n${fenced(entry.text)}\n`;
        break;
      case 'tool':
        yield `\n**Tool** ${codeSpan(entry.tool)}\n\n${fenced(entry.detail)}\n`;
        break;
      case 'notice':
        yield `\n**Notice**\n\n${fenced(entry.text)}\n`;
        break;
      case 'asked':
        yield `\n${entry.parts.map((part) => ('text' in part ? part.text : codeSpan(part.foreign))).join('')}\n`;
        break;
      case 'turn':
      case 'total':
        yield `\n*${turnLine(entry)}*\n`;
        break;
    }
  }
}

// ---- HTML ----

const MARKUP = /[&<>"']/g;
const ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text as HTML text or attribute value: one pass for the five characters markup gives meaning to. */
function html(text: string): string {
  const shown = escapeInvisible(text);
  MARKUP.lastIndex = 0;
  return MARKUP.test(shown) ? shown.replace(MARKUP, (ch) => ENTITIES[ch]!) : shown;
}

/** Nothing may run, load or be submitted: the page's own policy says so, whatever opens it. */
const HTML_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; script-src 'none'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-src 'none'";
const HTML_STYLE = `body{font:15px/1.5 system-ui,sans-serif;max-width:860px;margin:2em auto;padding:0 1em;color:#1d1d1f}
header{border-bottom:1px solid #ddd;margin-bottom:1em}dl{display:grid;grid-template-columns:max-content 1fr;gap:.2em 1em}dt{color:#666}dd{margin:0;word-break:break-all}
.entry{margin:1em 0}.who{font-weight:600;color:#444}.at{color:#888;font-weight:400;font-size:12px}.text{white-space:pre-wrap;word-wrap:break-word}
pre{background:#f5f5f7;padding:.6em;overflow:auto;white-space:pre-wrap}.notice{color:#8a5a00;white-space:pre-wrap}.turn{color:#666;font-size:13px}.note{color:#666}`;

export function* renderHtml(meta: TranscriptMeta, events: Iterable<TranscriptEvent>): Generator<string> {
  yield `<!doctype html>\n<html lang="en"><head><meta charset="utf-8">\n<meta http-equiv="Content-Security-Policy" content="${HTML_POLICY}">\n<meta name="referrer" content="no-referrer">\n`;
  yield `<title>${html(meta.title)}</title>\n<style>${HTML_STYLE}</style></head>\n<body>\n<header><h1>${html(meta.title)}</h1><dl>`;
  yield `<dt>Conversation</dt><dd>${html(meta.conversationId)}</dd><dt>Agent</dt><dd>${html(meta.agent)}</dd><dt>Exported</dt><dd>${html(meta.exportedAt)} · ${meta.events} events</dd><dt>Chain head</dt><dd>${html(meta.chainHead)}</dd>`;
  if (meta.uncertainRuns.length > 0) yield `<dt>Unknown outcome</dt><dd>${meta.uncertainRuns.map(html).join(', ')}</dd>`;
  yield '</dl><p class="note">A transcript for reading. The signed .wardbundle export of this conversation is the verifiable record.</p></header>\n<main>\n';
  for (const entry of entries(events, meta)) {
    switch (entry.kind) {
      case 'user':
      case 'assistant':
        yield `<section class="entry ${entry.kind}"><div class="who">${entry.kind === 'user' ? 'You' : 'Agent'} <span class="at">${html(time(entry.at))}${entry.cutShort ? ' (cut short)' : ''}${entry.rewound === true ? ' (rewound)' : ''}</span></div><div class="text">${html(entry.text)}</div></section>\n`;
        break;
      case 'tool':
        yield `<section class="entry tool"><div class="who">Tool ${html(entry.tool)}</div><pre>${html(entry.detail)}</pre></section>\n`;
        break;
      case 'notice':
        yield `<p class="entry notice">${html(entry.text)}</p>\n`;
        break;
      case 'asked':
        yield `<p class="entry asked">${entry.parts.map((part) => ('text' in part ? html(part.text) : `<code>${html(part.foreign)}</code>`)).join('')}</p>\n`;
        break;
      case 'turn':
      case 'total':
        yield `<p class="turn">${html(turnLine(entry))}</p>\n`;
        break;
    }
  }
  yield '</main>\n</body></html>\n';
}
