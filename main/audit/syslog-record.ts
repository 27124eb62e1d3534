/**
 * One journal event as an RFC 5424 syslog message, framed for RFC 5425 (octet counting), for the
 * audit sink (issue 28). The event's hash is its id: delivery is at-least-once, so a receiver
 * drops an id it has seen. In 'metadata' mode only identifiers, decisions and numbers leave the
 * machine (no prompt, answer or tool output); 'full' adds the payload, with Ward's secrets redacted.
 */
import { redactSecretKeys } from '../../common/events.js';
import { redactSecrets } from '../base/secret-redaction.js';
import type { OutboxEvent } from '../store/audit-outbox.js';

export type AuditContent = 'metadata' | 'full';

/** Who and where: the same for every event of one namespace on this machine. */
export interface RecordContext {
  readonly hostname: string;
  readonly user: string;
  readonly namespace: string;
  readonly procId: string;
  readonly wardVersion: string;
}

/** An event as the outbox hands it over (its payload the JSON text the chain hashes). */
export type AuditEvent = OutboxEvent;

/** facility 13 (log audit) × 8 + severity 6 (informational). */
const PRI = '<110>';
/** RFC 5612's documentation enterprise number, until Ward has its own. */
export const SD_ID = 'ward@32473';
const MAX_VALUE_CHARS = 1024;
/** Full mode's payload text; rsyslog's maxMessageSize must allow it (the default 8k does not). */
export const MAX_FULL_CHARS = 16 * 1024;

/**
 * The payload fields that are metadata (what happened, never what was said), by the SD-PARAM
 * name they get. Nested answerer/usage objects contribute theirs too.
 */
const METADATA: Readonly<Record<string, string>> = {
  model: 'model', session: 'session', workspace: 'workspace', sandboxed: 'sandboxed',
  tool: 'tool', toolUseId: 'toolUseId', ok: 'ok', bytes: 'bytes', durationMs: 'durationMs', errorCode: 'errorCode',
  kind: 'kind', value: 'grant', decision: 'decision', via: 'via', by: 'by', rule: 'rule', answer: 'answer', grantId: 'grantId',
  inputTokens: 'inputTokens', outputTokens: 'outputTokens', cacheReadTokens: 'cacheReadTokens', cacheCreationTokens: 'cacheCreationTokens',
  costUsd: 'costUsd', path: 'path', status: 'status', state: 'state', exitCode: 'exitCode', server: 'server', action: 'action',
  requested: 'requested', runModel: 'runModel',
};
const NESTED = new Set(['answerer', 'usage']);

const NEEDS_ESCAPE = /[\\"\]\u0000-\u001f\u007f]/;

/** RFC 5424 §6.3.3: inside a PARAM-VALUE, '"', '\' and ']' are escaped; control characters become spaces (one message, one line). */
export function escapeParamValue(value: string): string {
  // Most values (ids, numbers, names) need nothing: one test instead of two replaces (bench/audit-drain.ts).
  if (value.length <= MAX_VALUE_CHARS && !NEEDS_ESCAPE.test(value)) return value;
  return value
    .slice(0, MAX_VALUE_CHARS)
    .replace(/[\\"\]]/g, (char) => `\\${char}`)
    .replace(/[\u0000-\u001f\u007f]/g, ' ');
}

/** HOSTNAME, APP-NAME, PROCID, MSGID: printable US-ASCII without spaces, or the nil value. */
function header(value: string, max: number): string {
  const cleaned = value.replace(/[^\x21-\x7e]/g, '').slice(0, max);
  return cleaned === '' ? '-' : cleaned;
}

/** The payload's metadata fields by their METADATA name, values as they are (string, number or boolean). */
export function metadataParams(payload: unknown): Array<[string, string | number | boolean]> {
  const params: Array<[string, string | number | boolean]> = [];
  const add = (object: Record<string, unknown>, nested: boolean) => {
    for (const [key, value] of Object.entries(object)) {
      if (!nested && NESTED.has(key) && value !== null && typeof value === 'object' && !Array.isArray(value)) add(value as Record<string, unknown>, true);
      const name = METADATA[key];
      if (name !== undefined && value !== null && (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')) params.push([name, value]);
    }
  };
  if (payload !== null && typeof payload === 'object' && !Array.isArray(payload)) add(payload as Record<string, unknown>, false);
  return params;
}

/** The payload text for 'full' mode: secret-named fields and every secret Ward holds (in each form it may take in JSON) replaced, then capped. */
export function fullText(payload: unknown, secrets: readonly string[]): string {
  const text = redactSecrets(JSON.stringify(redactSecretKeys(payload)), secrets);
  return text.length > MAX_FULL_CHARS ? `${text.slice(0, MAX_FULL_CHARS)}…[truncated]` : text;
}

/** The payload as JSON (null if it is not: the record still goes, with the ids). */
export function parsePayload(event: AuditEvent): unknown {
  try {
    return JSON.parse(event.payload);
  } catch {
    return null;
  }
}

export function formatRecord(event: AuditEvent, context: RecordContext, content: AuditContent, secrets: readonly string[] = []): string {
  const payload = parsePayload(event);
  const params: Array<[string, string]> = [
    ['id', event.hash],
    ['namespace', context.namespace],
    ['user', context.user],
    ['conversation', event.conversationId],
    ['seq', String(event.seq)],
    ...(event.runId === null ? [] : [['run', event.runId] as [string, string]]),
    ['agent', event.agentId],
    ['agentVersion', String(event.agentVersion)],
    ['wardVersion', context.wardVersion],
    ...metadataParams(payload).map(([name, value]): [string, string] => [name, String(value)]),
  ];
  const data = `[${SD_ID}${params.map(([name, value]) => ` ${name}="${escapeParamValue(value)}"`).join('')}]`;
  const head = `${PRI}1 ${event.createdAt} ${header(context.hostname, 255)} ward ${header(context.procId, 128)} ${header(event.type, 32)}`;
  // MSG is UTF-8 with a BOM (RFC 5424 §6.4); metadata mode sends none.
  return content === 'full' ? `${head} ${data} \uFEFF${fullText(payload, secrets)}` : `${head} ${data}`;
}

/** `ward doctor`'s test record (MSGID `doctor_test`, no event id): the receiver shows the sink works end to end. */
export function testRecord(context: Omit<RecordContext, 'namespace'>, at: Date): string {
  const data = `[${SD_ID} test="true" user="${escapeParamValue(context.user)}" wardVersion="${escapeParamValue(context.wardVersion)}"]`;
  return `${PRI}1 ${at.toISOString()} ${header(context.hostname, 255)} ward ${header(context.procId, 128)} doctor_test ${data}`;
}

/** RFC 5425 §4.3: octet counting, the message's length in bytes, a space, the message. */
export function frame(message: string): Buffer {
  return Buffer.from(`${Buffer.byteLength(message, 'utf8')} ${message}`, 'utf8');
}
