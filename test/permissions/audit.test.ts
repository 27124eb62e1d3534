import { describe, expect, it } from 'vitest';
import { journalAuditSink, PERMISSION_DECISION_EVENT, redactText, summarizeArguments, type AuditRecord } from '../../main/permissions/audit.js';
import { seedConversation } from '../support/seed.js';
import { tempDir } from '../support/temp.js';

const CANARY = 'canary-7f3a9b2c41d8';

describe('audit records', () => {
  it('test_secret_keys_are_redacted', () => {
    const summary = summarizeArguments({ url: 'https://x', headers: { Authorization: CANARY, 'X-Api-Key': CANARY }, password: CANARY, nested: { token: CANARY } });
    expect(summary).not.toContain(CANARY);
    expect(summary).toContain('"url":"https://x"');
  });

  it('test_secrets_inside_commands_and_urls_are_redacted', () => {
    for (const text of [
      `curl -H "Authorization: Bearer ${CANARY}" https://api`,
      `GITHUB_TOKEN=${CANARY} gh pr list`,
      `curl https://user:${CANARY}@host/x`,
      `mysql --password=${CANARY}`,
      `echo sk-ant-${CANARY}`,
      `curl -H "X-Api-Key: ${CANARY}"`,
    ]) {
      expect(redactText(text), text).not.toContain(CANARY);
    }
  });

  it('test_summary_is_bounded', () => {
    const summary = summarizeArguments({ content: 'x'.repeat(100_000), list: Array.from({ length: 1000 }, (_, i) => i), deep: { a: { b: { c: { d: { e: 1 } } } } } });
    expect(summary.length).toBeLessThanOrEqual(500);
    expect(summary).toContain('(100000 chars)');
  });

  it('test_journal_sink_appends_permission_decision_events', () => {
    const { store, conversation } = seedConversation(tempDir());
    const record: AuditRecord = {
      kind: 'read',
      value: '/etc/hostname',
      tool: 'Read',
      argumentsSummary: '{}',
      decision: 'deny',
      answerer: { by: 'no_one' },
      reason: 'r',
      via: 'approval',
      at: new Date().toISOString(),
    };
    journalAuditSink(store.journal, conversation.id, null)(record);
    const events = [...store.journal.read(conversation.id)];
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: PERMISSION_DECISION_EVENT, payload: record });
    expect(store.journal.verify(conversation.id)).toEqual({ ok: true, count: 1 });
    store.close();
  });
});
