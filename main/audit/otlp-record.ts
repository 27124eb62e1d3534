/**
 * One journal event as an OpenTelemetry log record for the OTLP audit sink (issue 28): the same
 * fields, content modes and redaction as the syslog record, named by the GenAI semantic
 * conventions where one exists (gen_ai.*) and ward.* otherwise. The event's hash is the record's
 * log.record.uid (the semantic conventions' id for dropping duplicates); its type is the event name.
 */
import type { Attributes } from '@opentelemetry/api';
import { SeverityNumber, type LogAttributes, type LogRecord } from '@opentelemetry/api-logs';
import { fullText, metadataParams, parsePayload, type AuditContent, type AuditEvent, type RecordContext } from './syslog-record.js';

/** The metadata fields (by their syslog SD-PARAM name) that have a GenAI semantic-convention name. */
const GEN_AI: Readonly<Record<string, string>> = {
  model: 'gen_ai.request.model',
  tool: 'gen_ai.tool.name',
  toolUseId: 'gen_ai.tool.call.id',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cacheReadTokens: 'gen_ai.usage.cache_read.input_tokens',
  cacheCreationTokens: 'gen_ai.usage.cache_creation.input_tokens',
};

/** What the record's resource says: this Ward on this machine, for this OS user. */
export function resourceAttributes(context: Omit<RecordContext, 'namespace'>): Attributes {
  return {
    'service.name': 'ward',
    'service.version': context.wardVersion,
    'host.name': context.hostname,
    'user.name': context.user,
    'process.pid': Number(context.procId),
  };
}

export function otlpRecord(event: AuditEvent, context: RecordContext, content: AuditContent, secrets: readonly string[] = []): LogRecord {
  const payload = parsePayload(event);
  const attributes: LogAttributes = {
    'log.record.uid': event.hash,
    'gen_ai.conversation.id': event.conversationId,
    'gen_ai.agent.id': event.agentId,
    'gen_ai.agent.version': String(event.agentVersion),
    'ward.event.type': event.type,
    'ward.namespace': context.namespace,
    'ward.seq': event.seq,
    ...(event.runId === null ? {} : { 'ward.run': event.runId }),
  };
  for (const [name, value] of metadataParams(payload)) attributes[GEN_AI[name] ?? `ward.${name}`] = value;
  return {
    eventName: `ward.${event.type}`,
    timestamp: new Date(event.createdAt),
    severityNumber: SeverityNumber.INFO,
    severityText: 'INFO',
    // Metadata mode sends no text: the body is the event type, as syslog's MSGID.
    body: content === 'full' ? fullText(payload, secrets) : event.type,
    attributes,
  };
}
