import { showCommand } from '../../common/display.js';
import { journalEvent, type JournalEventType, type PayloadOf } from '../../common/events.js';

/** The journal event type that carries one AuditRecord as its payload (P4). */
export const PERMISSION_DECISION_EVENT = 'permission_decision' satisfies JournalEventType;

/** One per check, allowed or denied (P4): its schema is the permission_decision event's (common/events.ts). */
export type AuditRecord = PayloadOf<typeof PERMISSION_DECISION_EVENT>;
/** Who or what settled a check. */
export type Answerer = AuditRecord['answerer'];

/** Receives every audit record; the run service maps each to a journal event. A throw fails the check closed. */
export type AuditSink = (record: AuditRecord) => void;

const MAX_SUMMARY = 500;
const MAX_STRING = 120;
const MAX_DEPTH = 4;
const MAX_KEYS = 20;
const SECRET_KEY = /(pass(word|wd)?|secret|token|api[-_]?key|auth(orization)?|cookie|credential|private[-_]?key|session)/i;
/** Secret-looking fragments inside strings (a Bash command with a header, a URL with a password). */
const SECRET_TEXT: ReadonlyArray<readonly [RegExp, string]> = [
  [/\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]+/gi, '$1 [redacted]'],
  [/\b(?:sk|pk|rk|ghp|gho|ghs|ghu|github_pat|xox[abprs]|glpat)[-_][A-Za-z0-9_-]{8,}/g, '[redacted]'],
  [/\b([A-Za-z0-9_]*(?:PASS(?:WORD)?|SECRET|TOKEN|API_?KEY|CREDENTIALS?)[A-Za-z0-9_]*)=(?:"[^"]*"|'[^']*'|\S+)/gi, '$1=[redacted]'],
  [/((?:authorization|api[-_]?key|token|secret|password|cookie)\s*:\s*)[^\s"']+/gi, '$1[redacted]'],
  [/(--?(?:password|passwd|token|secret|api-?key)[= ])\S+/gi, '$1[redacted]'],
  [/(\b[a-z][a-z0-9+.-]*:\/\/)[^/\s:@]+:[^/\s@]+@/gi, '$1[redacted]@'],
];

export function redactText(text: string): string {
  let out = text;
  for (const [pattern, replacement] of SECRET_TEXT) out = out.replace(pattern, replacement);
  return out;
}

function summarizeValue(value: unknown, depth: number): unknown {
  if (typeof value === 'string') {
    const redacted = redactText(value);
    return redacted.length > MAX_STRING ? `${redacted.slice(0, MAX_STRING)}… (${value.length} chars)` : redacted;
  }
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return value;
  if (depth >= MAX_DEPTH) return '…';
  if (Array.isArray(value)) return value.slice(0, MAX_KEYS).map((item) => summarizeValue(item, depth + 1));
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value as Record<string, unknown>).slice(0, MAX_KEYS)) {
      out[key] = SECRET_KEY.test(key) ? '[redacted]' : summarizeValue(item, depth + 1);
    }
    return out;
  }
  return String(typeof value);
}

/** A bounded, redacted one-line summary of tool arguments for the journal and prompts. */
export function summarizeArguments(input: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(summarizeValue(input, 0)) ?? 'null';
  } catch {
    text = '(unprintable arguments)';
  }
  return text.length > MAX_SUMMARY ? `${text.slice(0, MAX_SUMMARY - 1)}…` : text;
}

/** The longest command line Ward asks a person about: a longer one cannot be read whole at a prompt. */
export const MAX_ASKED_COMMAND = 2_000;
/** The longest command line a decision record keeps; a grant may allow a longer one unasked. */
const MAX_RECORDED_COMMAND = 8_000;

/** A Bash command line as a person sees it: whole, escaped, whitespace runs counted, secrets redacted. */
export function commandForPerson(commandLine: string): string {
  return redactText(showCommand(commandLine));
}

/** The command for a decision record: as the person saw it, bounded, saying how long it was. */
export function commandForRecord(commandLine: string): string {
  const shown = commandForPerson(commandLine);
  return shown.length > MAX_RECORDED_COMMAND ? `${shown.slice(0, MAX_RECORDED_COMMAND)}… (${shown.length} characters in all)` : shown;
}

/** The minimal journal surface the sink needs (main/store/journal.ts Journal satisfies it). */
export interface JournalAppender {
  append(conversationId: string, input: { type: string; payload: unknown; runId?: string | null }): unknown;
}

/** An AuditSink that appends each record as a `permission_decision` event of a conversation. */
export function journalAuditSink(journal: JournalAppender, conversationId: string, runId: string | null = null): AuditSink {
  return (record) => {
    journal.append(conversationId, { ...journalEvent(PERMISSION_DECISION_EVENT, record), runId });
  };
}
