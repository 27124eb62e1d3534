/**
 * Issue 28: every journal event reaches a real rsyslog over TLS (RFC 5425), once after dedupe by
 * id, through receiver outages, a receiver killed mid-batch, a certificate that does not verify
 * and a sink that accepts and never answers; the backlog is kept until the receiver took it.
 */
import fs from 'node:fs';
import net from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { probeAuditSink } from '../../main/app/audit.js';
import { parseNamespace } from '../../main/namespaces/namespace.js';
import type { AuditTuning } from '../../main/app/audit.js';
import { auditWard, expectExactlyOnceAfterDedupe, type AuditWard } from '../support/audit-events.js';
import { seedConversation } from '../support/seed.js';
import { tempDir } from '../support/temp.js';
import { freePort, makeTestCa, Rsyslog, type TestCa } from '../support/rsyslog.js';

const PROMPT_CANARY = 'CANARY-prompt-text-4b1e9c';
const MODEL_KEY = 'sk-ant-CANARY-model-key-77f1a2d9';
const CONNECTION_SECRET = 'CANARY-connection-token-5c3d8e1f';

const FAST: AuditTuning = { idleMs: 50, backoffMs: { first: 50, max: 200 }, limits: { connectMs: 2_000, writeMs: 10_000, closeMs: 5_000 } };

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function waitFor(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

interface Setup extends Omit<AuditWard, 'close'> {
  readonly rsyslog: Rsyslog;
  readonly ca: TestCa;
}

interface SetupOptions {
  readonly tuning?: AuditTuning;
  /** A port of the test's own (a silent sink); default: a free one for rsyslog. */
  readonly port?: number;
  readonly content?: 'metadata' | 'full';
}

async function setup({ tuning = {}, port, content }: SetupOptions = {}): Promise<Setup> {
  const dir = tempDir('ward-audit-');
  const ca = makeTestCa(dir);
  const rsyslog = new Rsyslog(dir, port ?? (await freePort()), ca);
  cleanups.push(() => rsyslog.stop('SIGKILL'));
  const ward = auditWard(dir + '/home', { sink: { syslog: { host: 'localhost', port: rsyslog.port, caFile: ca.caFile } }, content, tuning: { ...FAST, ...tuning }, modelKey: MODEL_KEY, promptCanary: PROMPT_CANARY });
  cleanups.push(() => ward.close());
  return { ...ward, rsyslog, ca };
}

describe('audit sink: syslog over TLS to a real rsyslog', () => {
  it('test_every_journaled_event_arrives_once_with_its_hash_as_id_and_no_prompt_text_or_key_in_metadata_mode', async () => {
    const { app, rsyslog, journal, backlog } = await setup({ tuning: { batchSize: 100 } });
    await rsyslog.start();
    const journaled = journal(250);
    app.startAudit();
    await waitFor(() => rsyslog.ids().length >= journaled.length, 'every event at rsyslog');
    await waitFor(() => backlog() === 0, 'the cursor to reach the head');
    expect(rsyslog.ids()).toHaveLength(journaled.length);
    expectExactlyOnceAfterDedupe(rsyslog.ids(), journaled);
    const text = fs.readFileSync(rsyslog.output, 'utf8');
    expect(text).not.toContain(PROMPT_CANARY);
    expect(text).not.toContain(MODEL_KEY);
    const decision = rsyslog.lines().find((line) => line.includes(' permission_decision '))!;
    expect(decision).toMatch(/^<110>1 \S+ \S+ ward \d+ permission_decision \[ward@32473 id="[0-9a-f]{64}" namespace="default" /);
    expect(decision).toContain('kind="net" grant="example.com" tool="Bash" decision="allow" by="person" answer="once" via="approval"');
    expect(decision).not.toContain('argumentsSummary');
  });

  it('test_delivery_cycles_do_not_open_the_databases_again_and_a_namespace_made_meanwhile_is_sent', async () => {
    const { app, core, rsyslog, journal, backlog } = await setup();
    await rsyslog.start();
    // Finding the namespaces opens every database for writing (migrations, integrity check): a turn's journal waits for that.
    const opens = vi.spyOn(core, 'listNamespaces');
    app.startAudit();
    for (let cycle = 0; cycle < 5; cycle++) {
      const journaled = journal(10);
      await waitFor(() => backlog() === 0 && new Set(rsyslog.ids()).size === journaled.length, `cycle ${cycle}'s events at rsyslog`);
    }
    expect(opens).toHaveBeenCalledTimes(1);
    const team = seedConversation(app.folder.home, 'team');
    cleanups.push(async () => team.core.close());
    const teamHashes = team.store.journal.appendMany(team.conversation.id, [{ type: 'user_prompt', payload: { text: 'hi' } }]).map((event) => event.hash);
    await waitFor(() => rsyslog.lines().some((line) => line.includes(`id="${teamHashes[0]}" namespace="team"`)), "the new namespace's event at rsyslog");
    expect(opens).toHaveBeenCalledTimes(2);
  });

  it('test_while_a_turn_runs_the_sink_only_trickles_one_small_batch_per_pause', async () => {
    // The turn starts after the loop's first look (else the first batch would wait the pause too);
    // the pause is long so the checks below cannot race the next batch; stop() cuts it short.
    let looks = 0;
    const { app, rsyslog, journal, backlog } = await setup({ tuning: { turning: () => looks++ > 0, turnPace: { batchSize: 10, pauseMs: 60_000 } } });
    await rsyslog.start();
    journal(100);
    const delivery = app.startAudit()!;
    await waitFor(() => delivery.status().sent > 0, 'the first batch');
    expect(delivery.status().sent).toBe(10);
    expect(backlog()).toBe(90);
    expect(new Set(rsyslog.ids()).size).toBe(10);
    await delivery.stop();
  });

  it('test_a_batch_read_just_before_a_turn_starts_stops_where_it_is_until_the_turns_start_is_over', async () => {
    // The loop's first look finds no turn starting and reads a batch of 1,000 events; from then on
    // a turn is starting, for 1.5 s.
    let startingUntil: number | undefined;
    const holding = () => {
      startingUntil ??= Date.now() + 1_500;
      return Date.now() < startingUntil && holding.looks++ > 0;
    };
    holding.looks = 0;
    const { app, rsyslog, journal, backlog } = await setup({ tuning: { holding, batchSize: 1_000 } });
    await rsyslog.start();
    journal(1_000);
    const delivery = app.startAudit()!;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    // Read, not sent: the batch waits between its slices while the turn starts.
    expect(holding.looks).toBeGreaterThan(1);
    expect(rsyslog.ids()).toEqual([]);
    expect(backlog()).toBe(1_000);
    await waitFor(() => backlog() === 0, 'the batch once the turn started');
    expect(delivery.status().sent).toBe(1_000);
    await delivery.stop();
  });

  it('test_after_a_turn_the_loop_sends_small_batches_each_followed_by_a_rest', async () => {
    // A turn is starting at the loop's first look, not after; its rests are long here so the
    // checks below cannot race the next batch; stop() cuts the rest short.
    let looks = 0;
    const { app, rsyslog, journal, backlog } = await setup({ tuning: { holding: () => looks++ === 0, turnPace: { batchSize: 200, pauseMs: 50 }, betweenTurnsPace: { withinMs: 60_000, batchSize: 100, restFactor: 10_000 } } });
    await rsyslog.start();
    journal(1_000);
    const delivery = app.startAudit()!;
    await waitFor(() => delivery.status().sent > 0, 'the first batch');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(delivery.status().sent).toBe(100);
    expect(backlog()).toBe(900);
    expect(new Set(rsyslog.ids()).size).toBe(100);
    await delivery.stop();
  });

  it('test_a_receiver_down_at_first_gets_the_whole_backlog_once_it_is_up', async () => {
    const { app, rsyslog, journal, backlog, everyHash } = await setup();
    journal(50);
    const delivery = app.startAudit()!;
    await waitFor(() => delivery.status().failures >= 2, 'failed attempts while rsyslog is down');
    // The 50 events and the journaled failure.
    expect(backlog()).toBe(51);
    await rsyslog.start();
    journal(50);
    await waitFor(() => backlog() === 0, 'the backlog to drain');
    expectExactlyOnceAfterDedupe(rsyslog.ids(), everyHash());
  });

  it('test_a_receiver_killed_mid_batch_gets_every_event_after_its_restart_ids_unique', async () => {
    const { app, rsyslog, journal, backlog, everyHash } = await setup({ tuning: { batchSize: 5_000 } });
    await rsyslog.start();
    const journaled = journal(20_000);
    const delivery = app.startAudit()!;
    await waitFor(() => rsyslog.lines().length > 0, 'the first events at rsyslog');
    await rsyslog.stop('SIGKILL');
    const atKill = new Set(rsyslog.ids()).size;
    expect(atKill).toBeLessThan(journaled.length);
    expect(backlog()).toBeGreaterThan(0);
    // Back up only once a send failed (the batch the kill cut, or the next one's connection).
    await waitFor(() => delivery.status().failures > 0, 'a failed send');
    await rsyslog.start();
    await waitFor(() => backlog() === 0, 'the backlog to drain after the restart', 60_000);
    // The events, and the sink's failure and recovery journaled meanwhile.
    expectExactlyOnceAfterDedupe(rsyslog.ids(), everyHash());
    expect(everyHash()).toHaveLength(journaled.length + 2);
  });

  it('test_a_certificate_that_does_not_verify_is_refused_journaled_once_and_the_backlog_kept_until_a_good_one', async () => {
    const { app, rsyslog, ca, journal, backlog, everyHash, sinkEvents } = await setup();
    await rsyslog.start({ certFile: ca.strangerCertFile, keyFile: ca.strangerKeyFile });
    journal(30);
    const delivery = app.startAudit()!;
    await waitFor(() => delivery.status().failures >= 4, 'refused handshakes');
    expect(delivery.status().lastProblem).toMatch(/certificate/i);
    expect(rsyslog.ids()).toEqual([]);
    // Four refusals, one event: the change of state, hash-chained like every event, waiting with the rest.
    expect(sinkEvents()).toEqual([{ state: 'failing', failingSince: expect.stringMatching(/^20/), reason: expect.stringMatching(/certificate/i), waiting: 30 }]);
    expect(backlog()).toBe(31);
    expect(app.folder.store(parseNamespace('default')).journal.verify(app.folder.store(parseNamespace('default')).conversations.list()[0]!.id)).toMatchObject({ ok: true });
    await rsyslog.stop();
    await rsyslog.start();
    await waitFor(() => backlog() === 0 && sinkEvents().length === 2, 'the kept backlog and the recovery to be delivered');
    const [failing] = sinkEvents() as Array<{ failingSince: string }>;
    expect(sinkEvents()[1]).toEqual({ state: 'delivering', failingSince: failing!.failingSince, reason: null, waiting: expect.any(Number) });
    // The sink's own events reached rsyslog too.
    expectExactlyOnceAfterDedupe(rsyslog.ids(), everyHash());
    expect(rsyslog.lines().filter((line) => line.includes(' audit_sink ')).map((line) => /state="(\w+)"/.exec(line)?.[1])).toEqual(['failing', 'delivering']);
  });

  it('test_a_sink_that_accepts_and_never_answers_costs_a_bounded_time_and_keeps_the_backlog', async () => {
    const silent = net.createServer(() => undefined);
    const sockets = new Set<net.Socket>();
    silent.on('connection', (socket) => sockets.add(socket));
    const port = await freePort();
    await new Promise<void>((resolve) => silent.listen(port, '127.0.0.1', resolve));
    cleanups.push(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    });
    const { app, journal, backlog, sinkEvents } = await setup({ tuning: { limits: { connectMs: 200, writeMs: 200, closeMs: 200 } }, port });
    journal(10);
    const delivery = app.startAudit()!;
    await waitFor(() => delivery.status().failures >= 3, 'three bounded attempts');
    expect(delivery.status().lastProblem).toContain('did not connect within 200 ms');
    expect(backlog()).toBe(11);
    expect(sinkEvents()).toEqual([{ state: 'failing', failingSince: expect.any(String), reason: expect.stringContaining('did not connect within 200 ms'), waiting: 10 }]);
    await delivery.stop();
  });

  it('test_full_mode_sends_the_text_with_the_model_key_and_a_connection_secret_redacted', async () => {
    const { app, rsyslog, journal, backlog } = await setup({ content: 'full' });
    await app.keys.secretStore(parseNamespace('default')).set('connection:tracker', JSON.stringify({ access_token: CONNECTION_SECRET }));
    await rsyslog.start();
    journal(3);
    const extra = app.folder.store(parseNamespace('default'));
    const conversation = extra.conversations.list()[0]!;
    extra.journal.append(conversation.id, { type: 'assistant_text', payload: { text: `the key is ${MODEL_KEY} and the token ${CONNECTION_SECRET}` } });
    app.startAudit();
    await waitFor(() => backlog() === 0, 'full-mode delivery');
    const text = fs.readFileSync(rsyslog.output, 'utf8');
    expect(text).toContain(`${PROMPT_CANARY} 0`);
    expect(text).toContain('the key is [redacted] and the token [redacted]');
    expect(text).not.toContain(MODEL_KEY);
    expect(text).not.toContain(CONNECTION_SECRET);
  });

  it('test_doctor_sends_a_test_record_rsyslog_receives_shows_the_backlog_and_says_when_the_certificate_does_not_verify', async () => {
    const { app, core, rsyslog, ca, journal } = await setup();
    journal(7);
    const probe = probeAuditSink(() => app.policy, core);
    await rsyslog.start({ certFile: ca.strangerCertFile, keyFile: ca.strangerKeyFile });
    const refused = (await probe(core)) as { status: string; detail: string };
    expect(refused.status).toBe('error');
    expect(refused.detail).toMatch(/syslog localhost:\d+ over TLS \(verified\) unreachable: .*certificate.*; 7 event\(s\) waiting, the oldest from 20/);
    await rsyslog.stop();
    await rsyslog.start();
    const ok = (await probe(core)) as { status: string; detail: string };
    expect(ok).toMatchObject({ status: 'ok', detail: expect.stringMatching(/^sending to syslog localhost:\d+ over TLS \(verified\), a test record taken: 7 event\(s\) waiting, the oldest from 20/) });
    // rsyslog got the test record, and no event: doctor moves no cursor.
    expect(rsyslog.lines()).toEqual([expect.stringMatching(/^<110>1 20\S+ \S+ ward \d+ doctor_test \[ward@32473 test="true" user="[^"]+" wardVersion="[^"]+"\]$/)]);
    expect(rsyslog.ids()).toEqual([]);
  });
});
