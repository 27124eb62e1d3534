import { describe, expect, it } from 'vitest';
import { escapeParamValue, formatRecord, frame, type AuditEvent, type RecordContext } from '../../main/audit/syslog-record.js';
import { mergeDocuments } from '../../main/policy/merge.js';
import { compilePolicy, parsePolicy } from '../../main/policy/policy.js';
import { SecretScanner } from '../../main/export/secret-scan.js';

const CONTEXT: RecordContext = { hostname: 'laptop 7', user: 'ana', namespace: 'work', procId: '42', wardVersion: '0.1.0' };
const SECRET = 'sk-ant-secret-value-0123456789';

function event(type: string, payload: unknown): AuditEvent {
  return { conversationId: 'c1', seq: 3, runId: 'r1', type, payload: JSON.stringify(payload), createdAt: '2026-12-02T01:00:00.000Z', hash: 'a'.repeat(64), agentId: 'helper', agentVersion: 2 };
}

describe('RFC 5424 records for the audit sink', () => {
  it('test_a_record_has_the_rfc5424_header_and_escapes_quote_backslash_and_bracket_in_param_values', () => {
    const record = formatRecord(event('permission_decision', { tool: 'Bash', value: 'a"b\\c]d\ne', decision: 'deny', answerer: { by: 'rule', rule: 'net:x' } }), CONTEXT, 'metadata');
    expect(record).toBe(
      '<110>1 2026-12-02T01:00:00.000Z laptop7 ward 42 permission_decision [ward@32473 id="' + 'a'.repeat(64) +
        '" namespace="work" user="ana" conversation="c1" seq="3" run="r1" agent="helper" agentVersion="2" wardVersion="0.1.0" tool="Bash" grant="a\\"b\\\\c\\]d e" decision="deny" by="rule" rule="net:x"]',
    );
    expect(escapeParamValue('x'.repeat(5000))).toHaveLength(1024);
  });

  it('test_octet_counting_frames_count_bytes_not_characters', () => {
    expect(frame('é✓').toString('utf8')).toBe('5 é✓');
  });

  it('test_metadata_mode_sends_no_prompt_answer_or_tool_output_and_full_mode_redacts_secrets', () => {
    const prompt = event('user_prompt', { text: `deploy with ${SECRET}` });
    const result = event('tool_result', { toolUseId: 't', tool: 'Read', ok: true, bytes: 10, durationMs: 1, errorCode: null, preview: 'file body', previewTruncated: false });
    expect(formatRecord(prompt, CONTEXT, 'metadata')).not.toContain('deploy');
    expect(formatRecord(result, CONTEXT, 'metadata')).not.toContain('file body');
    expect(formatRecord(result, CONTEXT, 'metadata')).toContain('tool="Read" ok="true" bytes="10"');
    const secrets = new SecretScanner([{ label: 'key', value: SECRET }]).texts;
    const full = formatRecord(prompt, CONTEXT, 'full', secrets);
    expect(full).toContain('\uFEFF{"text":"deploy with [redacted]"}');
    expect(full).not.toContain(SECRET);
    expect(formatRecord(event('x', { token: 'abcdefghijkl' }), CONTEXT, 'full')).not.toContain('abcdefghijkl');
  });
});

describe('the auditSink and auditContent policy keys', () => {
  const sink = (syslog: Record<string, unknown>) => JSON.stringify({ auditSink: { syslog } });

  it('test_tls_is_on_by_default_and_off_only_for_a_loopback_host', () => {
    expect(parsePolicy(sink({ host: 'SIEM.example.com', port: 6514 }), 'p').settings.get('auditSink')!.value).toEqual({ syslog: { host: 'siem.example.com', port: 6514, tls: true } });
    expect(parsePolicy(sink({ host: '127.0.0.1', port: 514, tls: false }), 'p').settings.get('auditSink')!.value).toEqual({ syslog: { host: '127.0.0.1', port: 514, tls: false } });
    expect(() => parsePolicy(sink({ host: 'siem.example.com', port: 514, tls: false }), 'p')).toThrow(/"tls": false is allowed only for a loopback host .* not "siem.example.com"/);
    expect(() => parsePolicy(sink({ host: 'https://siem', port: 514 }), 'p')).toThrow(/a host name or IP address/);
    expect(() => parsePolicy(sink({ host: 'siem', port: 514, caFile: 'ca.pem' }), 'p')).toThrow(/absolute path/);
    expect(() => parsePolicy(JSON.stringify({ auditContent: 'everything' }), 'p')).toThrow(/auditContent/);
  });

  it('test_two_sources_naming_different_sinks_fail_closed_and_a_recommended_sink_is_refused', () => {
    const doc = (source: string, host: string) => ({ source, mandatory: { auditSink: { syslog: { host, port: 6514 } } }, recommended: {} });
    const reading = mergeDocuments([doc('machine', 'a.example.com'), doc('user', 'b.example.com')]);
    expect(reading.errors.join('\n')).toMatch(/auditSink: .*the sources must agree on auditSink/);
    expect(() => compilePolicy(reading)).toThrow();
    const recommended = mergeDocuments([{ source: 'm', mandatory: {}, recommended: { auditSink: { syslog: { host: 'a.example.com', port: 6514 } } } }]);
    expect(recommended.errors.join('\n')).toMatch(/auditSink can only be mandatory/);
  });
});
