/**
 * Issue 28: a `ward run` sends nothing to the audit sink from its own process (that would be the
 * turn's time); when it ends it starts one background sender per data folder, at the lowest CPU
 * priority, which delivers every event to a real rsyslog and exits once idle. `ward audit send`
 * flushes by hand, says which sender already runs, takes over a dead sender's lock, and fails
 * with the backlog kept when the sink is down.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { probeAuditSink, type AuditTuning } from '../../main/app/audit.js';
import { runBackgroundSender } from '../../main/app/audit-sender.js';
import { parsePolicy } from '../../main/policy/policy.js';
import { announceTurn } from '../../main/audit/turn-announce.js';
import { parseNamespace } from '../../main/namespaces/namespace.js';
import { DataFolder } from '../../main/store/data-folder.js';
import { startModelProvider } from '../fixtures/model-provider/provider.js';
import { auditWard, expectExactlyOnceAfterDedupe, mixedAuditEvents, type AuditWard } from '../support/audit-events.js';
import { freePort, makeTestCa, Rsyslog, type TestCa } from '../support/rsyslog.js';
import { seedConversation } from '../support/seed.js';
import { tempDir } from '../support/temp.js';
import { ward } from '../support/ward-cli.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function waitFor<T>(check: () => T | null | false, what: string, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== null && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function lockPid(home: string): number | null {
  try {
    return (JSON.parse(fs.readFileSync(path.join(home, 'audit-sender.lock'), 'utf8')) as { pid: number }).pid;
  } catch {
    return null;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A data folder with an audit sink policy pointing at a (not yet started) rsyslog over TLS. */
async function sinkSetup(): Promise<{ dir: string; home: string; ca: TestCa; rsyslog: Rsyslog; env: NodeJS.ProcessEnv }> {
  const dir = tempDir('ward-audit-sender-');
  const home = path.join(dir, 'home');
  fs.mkdirSync(home, { mode: 0o700 });
  const ca = makeTestCa(dir);
  const rsyslog = new Rsyslog(dir, await freePort(), ca);
  cleanups.push(() => rsyslog.stop('SIGKILL'));
  const policy = path.join(dir, 'policy.json');
  fs.writeFileSync(policy, JSON.stringify({ auditSink: { syslog: { host: 'localhost', port: rsyslog.port, caFile: ca.caFile } } }), { mode: 0o644 });
  // A sender this test started is stopped with it, whatever the test's outcome.
  cleanups.push(async () => {
    const pid = lockPid(home);
    if (pid !== null && isAlive(pid)) process.kill(pid, 'SIGKILL');
  });
  return { dir, home, ca, rsyslog, env: { WARD_HOME: home, WARD_POLICY: policy, WARD_SANDBOX: 'off', DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS } };
}

/** Every event hash in the data folder's default namespace, and what still waits for the sink. */
function journal(home: string): { hashes: string[]; waiting: number } {
  const folder = new DataFolder(home);
  try {
    const store = folder.readOnlyStore(parseNamespace('default'));
    const hashes = store.conversations.list().flatMap((conversation) => [...store.journal.read(conversation.id)].map((event) => event.hash));
    return { hashes, waiting: store.audit.backlog().count };
  } finally {
    folder.close();
  }
}

/** The PROCID of each line rsyslog received (RFC 5424: the field after APP-NAME `ward`). */
function procIds(rsyslog: Rsyslog): Set<string> {
  return new Set(rsyslog.lines().flatMap((line) => / ward (\S+) /.exec(line)?.[1] ?? []));
}

/** An in-process app with a backlog to send to a running rsyslog over TLS (the sender's loop without a process of its own). */
async function inProcessSink(tuning: AuditTuning): Promise<{ dir: string; ca: TestCa; home: string; rsyslog: Rsyslog; audit: AuditWard }> {
  const dir = tempDir('ward-audit-sender-');
  const ca = makeTestCa(dir);
  const rsyslog = new Rsyslog(dir, await freePort(), ca);
  cleanups.push(() => rsyslog.stop('SIGKILL'));
  await rsyslog.start();
  const home = path.join(dir, 'home');
  const audit = auditWard(home, { sink: { syslog: { host: 'localhost', port: rsyslog.port, caFile: ca.caFile } }, tuning, modelKey: 'sk-ant-unused', promptCanary: 'prompt' });
  cleanups.push(() => audit.close());
  return { dir, ca, home, rsyslog, audit };
}

describe('audit sink: the background sender', () => {
  it('test_ward_run_hands_its_events_to_one_low_priority_background_sender_that_delivers_them_all', async () => {
    const { home, rsyslog, env } = await sinkSetup();
    await rsyslog.start();
    const provider = await startModelProvider([{ blocks: [{ type: 'text', text: 'Hello.' }] }]);
    cleanups.push(() => provider.close());

    const run = await ward(['run', '--new', '--', 'hi'], { env: { ...env, WARD_MODEL_BASE_URL: provider.url, ANTHROPIC_API_KEY: 'sk-ant-api03-unused' }, timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    // The turn said it was starting before its run was recorded, and that it ended.
    expect(fs.readdirSync(path.join(home, 'turns-starting'))).toEqual([]);
    const sender = await waitFor(() => lockPid(home), 'the background sender to take its lock');
    expect(isAlive(sender)).toBe(true);
    expect(os.getPriority(sender)).toBe(os.constants.priority.PRIORITY_LOW);
    // A session of its own is a scheduling group of its own (autogroup): that group is lowered too.
    if (fs.existsSync('/proc/self/autogroup')) expect(fs.readFileSync(`/proc/${sender}/autogroup`, 'utf8')).toMatch(/ nice 19\n$/);

    await waitFor(() => journal(home).waiting === 0, 'the sender to deliver the run');
    const { hashes } = journal(home);
    expect(hashes.length).toBeGreaterThan(3);
    expectExactlyOnceAfterDedupe(rsyslog.ids(), hashes);
    // Every record came from the sender: the run's own process sent none.
    expect(procIds(rsyslog)).toEqual(new Set([String(sender)]));

    const second = await ward(['audit', 'send'], { env });
    expect(second).toMatchObject({ code: 0, stderr: '' });
    expect(second.stdout).toMatch(new RegExp(`^a background sender \\(pid ${sender}, since \\S+\\) is already sending; 0 event\\(s\\) waiting\\n$`));

    // `ward doctor` says it runs.
    const folder = new DataFolder(home);
    try {
      const check = await probeAuditSink(() => parsePolicy(fs.readFileSync(env.WARD_POLICY!, 'utf8'), 'test policy'), folder)(folder);
      expect(check).toMatchObject({ status: 'ok', detail: expect.stringMatching(new RegExp(`: 0 event\\(s\\) waiting; the background sender \\(pid ${sender}\\) is sending$`)) });
    } finally {
      folder.close();
    }

    // Stopped, it gives its lock up.
    process.kill(sender, 'SIGTERM');
    await waitFor(() => !isAlive(sender) && lockPid(home) === null, 'the sender to exit and release its lock', 30_000);
  });

  it('test_ward_audit_send_takes_over_a_dead_senders_lock_fails_with_the_backlog_kept_while_the_sink_is_down_then_sends_it', async () => {
    const { home, rsyslog, env } = await sinkSetup();
    const { core, store, conversation } = seedConversation(home);
    store.journal.appendMany(conversation.id, mixedAuditEvents(50, 'prompt'));
    core.close();
    // A sender killed with kill -9 left its lock behind.
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    fs.writeFileSync(path.join(home, 'audit-sender.lock'), JSON.stringify({ pid: Number(dead.stdout), since: new Date().toISOString() }));

    const down = await ward(['audit', 'send'], { env });
    expect(down.code, down.stderr).toBe(7);
    expect(down.stdout).toMatch(new RegExp(`^sent 0 event\\(s\\) to syslog localhost:${rsyslog.port} over TLS \\(verified\\) \\(stopped: .*ECONNREFUSED.*\\); 51 event\\(s\\) waiting, the oldest from \\S+\\n$`));
    expect(lockPid(home)).toBeNull();
    expect(journal(home).waiting).toBe(51);

    await rsyslog.start();
    const up = await ward(['audit', 'send'], { env });
    expect(up).toMatchObject({ code: 0, stderr: '' });
    expect(up.stdout).toMatch(/^sent 51 event\(s\) to syslog localhost:\d+ over TLS \(verified\); 0 event\(s\) waiting\n$/);
    expectExactlyOnceAfterDedupe(rsyslog.ids(), journal(home).hashes);
  });

  it('test_a_run_under_a_policy_that_does_not_parse_is_refused_in_one_line_and_starts_no_sender', async () => {
    const { home, env } = await sinkSetup();
    fs.writeFileSync(env.WARD_POLICY!, '{"auditSink": 5');
    const refused = await ward(['run', '--new', '--', 'hi'], { env: { ...env, ANTHROPIC_API_KEY: 'sk-ant-api03-unused' } });
    expect(refused.code).toBe(7);
    expect(refused.stderr).toMatch(/^ward run: the admin policy is not valid: .*is not valid JSON.*\n$/);
    expect(lockPid(home)).toBeNull();
  });

  it('test_while_a_turn_runs_in_the_namespace_in_another_process_the_sender_only_trickles_then_drains_once_it_ends', async () => {
    const { home, rsyslog, audit } = await inProcessSink({ idleMs: 50, turnPace: { batchSize: 10, pauseMs: 300 } });
    audit.journal(100);
    // A turn of a `ward run` (another, live process) in the same namespace.
    const store = audit.core.store(parseNamespace('default'));
    const agent = store.agents.find('helper')!;
    const conversation = store.conversations.create({ agentId: agent.agentId, agentVersion: agent.version, title: 'a turn' });
    const turnOwner = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    cleanups.push(() => void turnOwner.kill('SIGKILL'));
    const { run } = store.runs.admit(conversation.id, 'request-1', 'fingerprint');
    store.db.prepare('UPDATE runs SET owner_pid = ?, owner_identity = NULL WHERE id = ?').run(turnOwner.pid!, run.id);

    const sending = runBackgroundSender(home, () => audit.app.startAudit(), { idleExitMs: 500, checkMs: 50 });
    await waitFor(() => audit.backlog() < 100, 'the first small batch');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    // At most one batch of 10 per 300 ms pause: however loaded the machine, no more.
    expect(audit.backlog()).toBeGreaterThanOrEqual(100 - 10 * (1 + Math.ceil(1_000 / 300) + 1));
    store.runs.transition(run.id, 'failed', 'ended for the test');
    expect((await sending).kind).toBe('done');
    expect(audit.backlog()).toBe(0);
    expectExactlyOnceAfterDedupe(rsyslog.ids(), audit.everyHash());
  });

  it('test_while_a_turn_announced_it_is_starting_the_sender_sends_nothing', async () => {
    const { home, rsyslog, audit } = await inProcessSink({ idleMs: 50, turnPace: { batchSize: 10, pauseMs: 300 } });
    audit.journal(100);
    // What `ward run` does first, before its store opens and its run is admitted.
    const endTurn = announceTurn(home);
    const stop = new AbortController();
    const sending = runBackgroundSender(home, () => audit.app.startAudit(), { checkMs: 50 }, stop.signal);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(audit.backlog()).toBe(100);
    expect(rsyslog.ids()).toEqual([]);
    // The turn's process ended its turns: the sender sends at once.
    endTurn();
    await waitFor(() => audit.backlog() === 0, 'the backlog once the turn ended');
    stop.abort();
    expect(await sending).toEqual({ kind: 'done', sent: 100, lastProblem: null });
  });

  it('test_a_sender_started_after_a_turn_of_another_process_sends_small_batches_with_rests', async () => {
    // Rests long enough that the check below cannot race the second batch; the abort cuts it short.
    const { home, audit } = await inProcessSink({ idleMs: 50, betweenTurnsPace: { withinMs: 60_000, batchSize: 10, restFactor: 10_000 } });
    audit.journal(100);
    // A `ward run` started and ended its turn, as the one whose end starts the sender does.
    announceTurn(home)();
    const stop = new AbortController();
    const sending = runBackgroundSender(home, () => audit.app.startAudit(), { checkMs: 50 }, stop.signal);
    await waitFor(() => audit.backlog() < 100, 'the first batch');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(audit.backlog()).toBe(90);
    stop.abort();
    expect(await sending).toEqual({ kind: 'done', sent: 10, lastProblem: null });
  });

  it('test_the_sender_keeps_sending_while_events_arrive_exits_once_idle_and_gives_up_on_a_dead_sink_after_its_bound', async () => {
    const { dir, ca, home, rsyslog, audit } = await inProcessSink({ idleMs: 50 });
    audit.journal(100);
    const sending = runBackgroundSender(home, () => audit.app.startAudit(), { idleExitMs: 1_000, checkMs: 50 });
    await waitFor(() => audit.backlog() === 0, 'the first events to go');
    audit.journal(100);
    const outcome = await sending;
    expect(outcome).toEqual({ kind: 'done', sent: 200, lastProblem: null });
    expectExactlyOnceAfterDedupe(rsyslog.ids(), audit.everyHash());
    expect(lockPid(home)).toBeNull();

    // A sink that is down: it retries with backoff, then gives up and keeps the backlog.
    const deadHome = path.join(dir, 'dead-home');
    const dead = auditWard(deadHome, { sink: { syslog: { host: 'localhost', port: await freePort(), caFile: ca.caFile } }, tuning: { backoffMs: { first: 50, max: 100 } }, modelKey: 'sk-ant-unused', promptCanary: 'prompt' });
    cleanups.push(() => dead.close());
    dead.journal(10);
    const gaveUp = await runBackgroundSender(deadHome, () => dead.app.startAudit(), { stalledExitMs: 1_000, checkMs: 50 });
    expect(gaveUp).toMatchObject({ kind: 'done', sent: 0, lastProblem: expect.stringContaining('ECONNREFUSED') });
    expect(dead.backlog()).toBe(11);
  });
});
