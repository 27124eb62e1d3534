/**
 * Issue 28: a backlog of 100,000 journal events drained to a real rsyslog over TLS on this
 * machine (goal: at least 5,000 events/s), against the receiver's ceiling measured in the same
 * run: the same records, formatted beforehand, sent in one TLS connection. The ratio is what
 * reading the outbox, formatting, batching and one connection per batch cost on top.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AuditDelivery } from '../main/audit/delivery.js';
import { formatRecord, frame } from '../main/audit/syslog-record.js';
import { sendBatch } from '../main/audit/syslog-sender.js';
import { parseNamespace } from '../main/namespaces/namespace.js';
import { DataFolder } from '../main/store/data-folder.js';
import { freePort, makeTestCa, Rsyslog } from '../test/support/rsyslog.js';
import { round } from './stats.js';

const EVENTS = 100_000;
const CONVERSATIONS = 100;
const GOAL_PER_SECOND = 5_000;
const CONTEXT = { hostname: os.hostname(), user: 'bench', procId: String(process.pid), wardVersion: 'bench', namespace: 'bench' };

function journal(home: string): DataFolder {
  const core = new DataFolder(home);
  const store = core.store(parseNamespace('bench'));
  const agent = store.agents.publish('bench', { instructions: '' });
  const perConversation = EVENTS / CONVERSATIONS;
  for (let c = 0; c < CONVERSATIONS; c++) {
    const conversation = store.conversations.create({ agentId: agent.agentId, agentVersion: agent.version, title: `bench ${c}` });
    store.journal.appendMany(
      conversation.id,
      Array.from({ length: perConversation }, (_, i) =>
        i % 2 === 0
          ? { type: 'permission_decision', payload: { kind: 'net', value: 'example.com', tool: 'Bash', argumentsSummary: 'curl example.com', decision: 'allow', answerer: { by: 'person', answer: 'once' }, reason: 'asked', via: 'approval', at: new Date().toISOString() } }
          : { type: 'usage', payload: { inputTokens: i, outputTokens: 2, cacheReadTokens: 0, cacheCreationTokens: 0, costUsd: 0.01 } },
      ),
    );
  }
  return core;
}

async function seconds(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

export async function benchAuditDrain(): Promise<Record<string, unknown>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-bench-audit-'));
  const ca = makeTestCa(dir);
  const rsyslog = new Rsyslog(dir, await freePort(), ca);
  const core = journal(path.join(dir, 'home'));
  try {
    await rsyslog.start();
    const store = core.store(parseNamespace('bench'));
    const sink = { host: 'localhost', port: rsyslog.port, tls: true, caFile: ca.caFile };
    const target = { host: 'localhost', port: rsyslog.port, tls: true, extraCa: fs.readFileSync(ca.caFile, 'utf8') };
    // The receiver's ceiling: every record formatted beforehand, one connection.
    const data = Buffer.concat(store.audit.pending(EVENTS).map((event) => frame(formatRecord(event, CONTEXT, 'metadata'))));
    const ceiling = await seconds(() => sendBatch(target, data));
    const delivery = new AuditDelivery({ sink: { syslog: sink }, content: 'metadata', sources: () => [{ namespace: 'bench', outbox: store.audit, secrets: async () => [] }], context: CONTEXT });
    let sent = 0;
    const drain = await seconds(async () => (sent = await delivery.drain()));
    const received = new Set(rsyslog.ids()).size;
    const perSecond = Math.round(EVENTS / drain);
    return {
      events: EVENTS,
      sent,
      receivedDistinct: received,
      backlogAfter: store.audit.backlog().count,
      drainSeconds: round(drain, 2),
      eventsPerSecond: perSecond,
      receiverCeilingEventsPerSecond: Math.round(EVENTS / ceiling),
      ratioDrainToCeiling: round(drain / ceiling, 2),
      target: `>= ${GOAL_PER_SECOND} events/s to rsyslog over TLS`,
      pass: perSecond >= GOAL_PER_SECOND && sent === EVENTS && received === EVENTS,
    };
  } finally {
    await rsyslog.stop();
    core.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
