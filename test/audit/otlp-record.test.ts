import { describe, expect, it } from 'vitest';
import { otlpRecord } from '../../main/audit/otlp-record.js';
import type { AuditEvent, RecordContext } from '../../main/audit/syslog-record.js';
import { SecretScanner } from '../../main/export/secret-scan.js';
import { parsePolicy } from '../../main/policy/policy.js';

const CONTEXT: RecordContext = { hostname: 'laptop', user: 'ana', namespace: 'work', procId: '42', wardVersion: '0.1.0' };
const SECRET = 'sk-ant-secret-value-0123456789';

function event(type: string, payload: unknown): AuditEvent {
  return { conversationId: 'c1', seq: 3, runId: 'r1', type, payload: JSON.stringify(payload), createdAt: '2026-12-02T01:00:00.000Z', hash: 'b'.repeat(64), agentId: 'helper', agentVersion: 2 };
}

describe('OpenTelemetry log records for the audit sink', () => {
  it('test_a_record_carries_the_hash_as_log_record_uid_the_type_as_event_name_and_gen_ai_names_where_they_exist', () => {
    const usage = otlpRecord(event('usage', { model: 'claude-x', inputTokens: 10, outputTokens: 2, cacheReadTokens: 5, cacheCreationTokens: 1, costUsd: 0.01 }), CONTEXT, 'metadata');
    expect(usage).toMatchObject({ eventName: 'ward.usage', body: 'usage', severityText: 'INFO', timestamp: new Date('2026-12-02T01:00:00.000Z') });
    expect(usage.attributes).toEqual({
      'log.record.uid': 'b'.repeat(64),
      'gen_ai.conversation.id': 'c1',
      'gen_ai.agent.id': 'helper',
      'gen_ai.agent.version': '2',
      'ward.event.type': 'usage',
      'ward.namespace': 'work',
      'ward.seq': 3,
      'ward.run': 'r1',
      'gen_ai.request.model': 'claude-x',
      'gen_ai.usage.input_tokens': 10,
      'gen_ai.usage.output_tokens': 2,
      'gen_ai.usage.cache_read.input_tokens': 5,
      'gen_ai.usage.cache_creation.input_tokens': 1,
      'ward.costUsd': 0.01,
    });
    const decision = otlpRecord(event('permission_decision', { tool: 'Bash', toolUseId: 't1', kind: 'net', value: 'example.com', decision: 'allow', answerer: { by: 'person', answer: 'once' }, argumentsSummary: 'curl x' }), CONTEXT, 'metadata');
    expect(decision.attributes).toMatchObject({ 'gen_ai.tool.name': 'Bash', 'gen_ai.tool.call.id': 't1', 'ward.kind': 'net', 'ward.grant': 'example.com', 'ward.decision': 'allow', 'ward.by': 'person', 'ward.answer': 'once' });
    expect(JSON.stringify(decision)).not.toContain('curl x');
  });

  it('test_metadata_mode_sends_no_text_and_full_mode_sends_it_with_secrets_redacted', () => {
    const prompt = event('user_prompt', { text: `deploy with ${SECRET}` });
    expect(JSON.stringify(otlpRecord(prompt, CONTEXT, 'metadata'))).not.toContain('deploy');
    const full = otlpRecord(prompt, CONTEXT, 'full', new SecretScanner([{ label: 'key', value: SECRET }]).texts);
    expect(full.body).toBe('{"text":"deploy with [redacted]"}');
    expect(JSON.stringify(otlpRecord(event('x', { token: 'abcdefghijkl' }), CONTEXT, 'full'))).not.toContain('abcdefghijkl');
  });
});

describe('the auditSink policy key with an OTLP endpoint', () => {
  const sink = (otlp: Record<string, unknown>) => JSON.stringify({ auditSink: { otlp } });
  const value = (text: string) => parsePolicy(text, 'p').settings.get('auditSink')!.value;

  it('test_an_https_endpoint_is_taken_and_plain_http_only_to_this_machine', () => {
    expect(value(sink({ endpoint: 'https://OTEL.example.com/v1/logs', caFile: '/etc/ssl/corp.pem' }))).toEqual({ otlp: { endpoint: 'https://otel.example.com/v1/logs', caFile: '/etc/ssl/corp.pem' } });
    expect(value(sink({ endpoint: 'http://127.0.0.1:4318/v1/logs' }))).toEqual({ otlp: { endpoint: 'http://127.0.0.1:4318/v1/logs' } });
    expect(() => parsePolicy(sink({ endpoint: 'http://otel.example.com/v1/logs' }), 'p')).toThrow(/an https URL \(plain http only to this machine\)/);
    expect(() => parsePolicy(sink({ endpoint: 'https://otel.example.com/v1/logs', caFile: 'ca.pem' }), 'p')).toThrow(/absolute path/);
  });

  it('test_credentials_in_the_policy_are_refused_headers_userinfo_and_query_alike', () => {
    expect(() => parsePolicy(sink({ endpoint: 'https://otel.example.com/v1/logs', headers: { authorization: 'Bearer x' } }), 'p')).toThrow(/"headers" is not supported: a policy file is readable by every user/);
    expect(() => parsePolicy(sink({ endpoint: 'https://ana:pw@otel.example.com/v1/logs' }), 'p')).toThrow(/the otlp endpoint "https:\/\/otel.example.com\/v1\/logs" carries a user, password, query or fragment/);
    expect(() => parsePolicy(sink({ endpoint: 'https://otel.example.com/v1/logs?api_key=abc' }), 'p')).toThrow(/carries a user, password, query or fragment/);
    expect(() => parsePolicy(sink({ endpoint: 'https://otel.example.com/v1/logs?api_key=abc' }), 'p')).not.toThrow(/abc/);
  });

  it('test_exactly_one_sink_is_named', () => {
    const both = JSON.stringify({ auditSink: { otlp: { endpoint: 'https://otel.example.com/v1/logs' }, syslog: { host: 'siem.example.com', port: 6514 } } });
    expect(() => parsePolicy(both, 'p')).toThrow(/name exactly one sink/);
    expect(() => parsePolicy(JSON.stringify({ auditSink: {} }), 'p')).toThrow(/name exactly one sink/);
  });
});
