/**
 * Issue 28, the OTLP sink: every journal event reaches an OTLP/HTTP receiver (the test's own,
 * decoding the protobuf by the OpenTelemetry proto definitions; no OpenTelemetry Collector runs
 * here) through the SDK's exporter, once after dedupe by log.record.uid, through 503 answers and a
 * certificate that does not verify; the backlog is kept until the receiver took it, and no model
 * key, connection secret or other collector's credentials reach it.
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { probeAuditSink, type AuditTuning } from '../../main/app/audit.js';
import { parseNamespace } from '../../main/namespaces/namespace.js';
import { OtlpReceiver, type DecodedRecord } from '../support/otlp-receiver.js';
import { makeTestCa, type TestCa } from '../support/rsyslog.js';
import { auditWard, expectExactlyOnceAfterDedupe, type AuditWard } from '../support/audit-events.js';
import { tempDir } from '../support/temp.js';
import { until } from '../support/wait.js';

const PROMPT_CANARY = 'CANARY-prompt-text-9d2f61';
const MODEL_KEY = 'sk-ant-CANARY-model-key-3e8a0c5b';
const CONNECTION_SECRET = 'CANARY-connection-token-a71c4d02';
const OTHER_COLLECTOR_TOKEN = 'CANARY-other-collector-token-0b5e';

/** The whole export (the exporter's own retries included) is bounded by the sum: 4 s. */
const FAST: AuditTuning = { idleMs: 50, backoffMs: { first: 50, max: 200 }, limits: { connectMs: 1_000, writeMs: 2_000, closeMs: 1_000 } };

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Generous under load (two cores shared by many): each wait ends as soon as its condition holds. */
const waitFor = (check: () => boolean, what: string, timeoutMs = 60_000) => until(check, what, timeoutMs);

interface Setup extends Omit<AuditWard, 'close'> {
  readonly receiver: OtlpReceiver;
  readonly ca: TestCa;
  readonly endpoint: string;
}

async function setup(options: { answer?: (index: number) => number; stranger?: boolean; content?: 'metadata' | 'full'; tuning?: AuditTuning; port?: number } = {}): Promise<Setup> {
  const dir = tempDir('ward-otlp-');
  const ca = makeTestCa(dir);
  const receiver = await new OtlpReceiver(options.stranger ? { certFile: ca.strangerCertFile, keyFile: ca.strangerKeyFile } : ca, options.answer).start();
  cleanups.push(() => receiver.stop());
  const endpoint = `https://localhost:${options.port ?? receiver.port}/v1/logs`;
  const ward = auditWard(dir + '/home', { sink: { otlp: { endpoint, caFile: ca.caFile } }, content: options.content, tuning: { ...FAST, ...options.tuning }, modelKey: MODEL_KEY, promptCanary: PROMPT_CANARY });
  cleanups.push(() => ward.close());
  return { ...ward, receiver, ca, endpoint };
}

const uids = (records: readonly DecodedRecord[]) => records.map((record) => record.attributes['log.record.uid'] as string);

/** Every byte the receiver got, bodies and headers, as text: where a canary would show. */
function everything(receiver: OtlpReceiver): string {
  return receiver.requests.map((request) => `${JSON.stringify(request.headers)}\n${request.raw.toString('latin1')}`).join('\n');
}

describe('audit sink: OTLP/HTTP protobuf through the OpenTelemetry SDK exporter', () => {
  it('test_every_journaled_event_arrives_once_as_a_decoded_log_record_with_its_hash_as_uid_and_gen_ai_attributes', async () => {
    const { app, receiver, journal, backlog } = await setup({ tuning: { batchSize: 40 } });
    const journaled = journal(150);
    app.startAudit();
    await waitFor(() => backlog() === 0, 'the cursor to reach the head');
    expect(uids(receiver.accepted())).toHaveLength(journaled.length);
    expectExactlyOnceAfterDedupe(uids(receiver.accepted()), journaled);
    expect(receiver.requests.length).toBe(4);
    expect(receiver.requests[0]).toMatchObject({ path: '/v1/logs', headers: { 'content-type': 'application/x-protobuf' } });
    const usage = receiver.accepted().find((record) => record.eventName === 'ward.usage')!;
    expect(usage).toMatchObject({ severityNumber: 9, severityText: 'INFO', body: 'usage', scope: { name: 'ward.audit' } });
    expect(usage.attributes).toMatchObject({ 'gen_ai.request.model': 'claude-test', 'gen_ai.usage.output_tokens': 2, 'gen_ai.agent.id': expect.stringMatching(/^[0-9a-f-]{36}$/), 'ward.namespace': 'default', 'ward.costUsd': 0.01 });
    expect(usage.attributes['gen_ai.conversation.id']).toMatch(/./);
    expect(usage.resource).toMatchObject({ 'service.name': 'ward', 'user.name': expect.any(String), 'host.name': expect.any(String) });
    expect(usage.timeUnixNano).toBeGreaterThan(0n);
    const decision = receiver.accepted().find((record) => record.eventName === 'ward.permission_decision')!;
    expect(decision.attributes).toMatchObject({ 'gen_ai.tool.name': 'Bash', 'ward.grant': 'example.com', 'ward.decision': 'allow', 'ward.by': 'person' });
    const all = everything(receiver);
    expect(all).not.toContain(PROMPT_CANARY);
    expect(all).not.toContain(MODEL_KEY);
    expect(all).not.toContain('curl "x]"');
  });

  it('test_a_collector_answering_503_at_first_gets_the_whole_backlog_once_it_answers_200', async () => {
    const { app, receiver, journal, backlog, everyHash, sinkEvents } = await setup({ answer: (index) => (index < 4 ? 503 : 200), tuning: { batchSize: 20 } });
    journal(60);
    const delivery = app.startAudit()!;
    await waitFor(() => backlog() === 0, 'the backlog to drain past the 503s');
    expect(receiver.requests.filter((request) => request.status === 503)).toHaveLength(4);
    // A batch answered 503 carried events; they were sent again, and every event was taken once.
    expect(receiver.requests[0]!.records.length).toBeGreaterThan(0);
    // The outage is journaled once each way (failing, delivering), and those events are sent too.
    expect(sinkEvents()).toMatchObject([{ state: 'failing' }, { state: 'delivering' }]);
    expectExactlyOnceAfterDedupe(uids(receiver.accepted()), everyHash());
    expect(uids(receiver.accepted())).toHaveLength(everyHash().length);
    expect(delivery.status().sent).toBe(everyHash().length);
  });

  it('test_a_certificate_that_does_not_verify_is_refused_and_the_backlog_kept_until_a_good_one', async () => {
    const { app, receiver, ca, journal, backlog, everyHash } = await setup({ stranger: true });
    journal(30);
    const delivery = app.startAudit()!;
    await waitFor(() => delivery.status().failures >= 2, 'refused handshakes');
    expect(delivery.status().lastProblem).toMatch(/certificate/i);
    expect(receiver.requests).toEqual([]);
    // The 30 events and the one that says the sink is failing.
    expect(backlog()).toBe(31);
    receiver.useCertificate(ca);
    await waitFor(() => backlog() === 0, 'the kept backlog to drain');
    expectExactlyOnceAfterDedupe(uids(receiver.accepted()), everyHash());
  });

  it('test_a_collector_that_accepts_and_never_answers_costs_a_bounded_time_and_keeps_the_backlog', async () => {
    const silent = net.createServer(() => undefined);
    const sockets = new Set<net.Socket>();
    silent.on('connection', (socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    cleanups.push(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    });
    const port = (silent.address() as net.AddressInfo).port;
    const { app, journal, backlog } = await setup({ port, tuning: { limits: { connectMs: 200, writeMs: 200, closeMs: 200 } } });
    journal(10);
    const delivery = app.startAudit()!;
    await waitFor(() => delivery.status().failures >= 3, 'three bounded attempts');
    expect(delivery.status().lastProblem).toMatch(/^the audit sink https:\/\/localhost:\d+: .*time/i);
    expect(backlog()).toBe(11);
    await delivery.stop();
  });

  it('test_full_mode_sends_the_text_with_the_model_key_and_a_connection_secret_redacted_and_no_other_collectors_headers', async () => {
    const { app, receiver, journal, backlog, endpoint } = await setup({ content: 'full' });
    await app.keys.secretStore(parseNamespace('default')).set('connection:tracker', JSON.stringify({ access_token: CONNECTION_SECRET }));
    journal(3);
    const store = app.folder.store(parseNamespace('default'));
    store.journal.append(store.conversations.list()[0]!.id, { type: 'assistant_text', payload: { text: `the key is ${MODEL_KEY} and the token ${CONNECTION_SECRET}` } });
    // The user's OpenTelemetry settings (e.g. for the Claude CLI's own telemetry) are not the policy's.
    const saved = { ...process.env };
    process.env.OTEL_EXPORTER_OTLP_HEADERS = `authorization=Bearer ${OTHER_COLLECTOR_TOKEN}`;
    process.env.OTEL_EXPORTER_OTLP_LOGS_HEADERS = `x-api-key=${OTHER_COLLECTOR_TOKEN}`;
    process.env.OTEL_EXPORTER_OTLP_LOGS_ENDPOINT = 'https://127.0.0.1:9/v1/logs';
    cleanups.push(async () => {
      for (const name of ['OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_LOGS_HEADERS', 'OTEL_EXPORTER_OTLP_LOGS_ENDPOINT']) {
        if (saved[name] === undefined) delete process.env[name];
        else process.env[name] = saved[name];
      }
    });
    app.startAudit();
    await waitFor(() => backlog() === 0, 'full-mode delivery');
    expect(endpoint).toContain(String(receiver.port));
    const bodies = receiver.accepted().map((record) => record.body);
    expect(bodies).toContain(`{"text":"${PROMPT_CANARY} 0"}`);
    expect(bodies).toContain('{"text":"the key is [redacted] and the token [redacted]"}');
    const all = everything(receiver);
    expect(all).not.toContain(MODEL_KEY);
    expect(all).not.toContain(CONNECTION_SECRET);
    expect(all).not.toContain(OTHER_COLLECTOR_TOKEN);
    expect(process.env.OTEL_EXPORTER_OTLP_HEADERS).toContain(OTHER_COLLECTOR_TOKEN);
  });

  it('test_doctor_checks_the_otlp_sink_with_an_empty_export_and_says_when_the_certificate_does_not_verify', async () => {
    const { app, core, receiver, ca, journal } = await setup({ stranger: true });
    journal(7);
    const probe = probeAuditSink(() => app.policy, core);
    const refused = (await probe(core)) as { status: string; detail: string };
    expect(refused.status).toBe('error');
    expect(refused.detail).toMatch(/^OTLP https:\/\/localhost:\d+\/v1\/logs \(TLS verified\) unreachable: .*certificate.*; 7 event\(s\) waiting, the oldest from 20/);
    receiver.useCertificate(ca);
    const ok = (await probe(core)) as { status: string; detail: string };
    expect(ok).toMatchObject({ status: 'ok', detail: expect.stringMatching(/^sending to OTLP https:\/\/localhost:\d+\/v1\/logs \(TLS verified\): 7 event\(s\) waiting, the oldest from 20/) });
    expect(receiver.requests).toHaveLength(1);
    expect(receiver.requests[0]!.records).toEqual([]);
  });
});
