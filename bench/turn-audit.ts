/**
 * Issue 28: a turn with the audit sink on costs the turn nothing (goal: ratio <= 1.02). A whole
 * `ward run --new -- hi` text turn (WARD_SANDBOX=off, the scripted provider) with an admin policy
 * naming a real rsyslog over TLS and a backlog of 100,000 events waiting, so the background sender
 * (`ward audit send --background`, started by the first turn) sends while the turn runs; against
 * the same turn with no sink, alternating in one run. The backlog is queued again before every
 * "on" turn (its cursor removed), so each one runs during a drain, not after it. rsyslog, on this
 * machine in place of a remote SIEM, runs at the lowest priority.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runningSender } from '../main/audit/sender-lock.js';
import { parseNamespace } from '../main/namespaces/namespace.js';
import { DEFAULT_MODEL } from '../main/providers/model-profile.js';
import { DataFolder } from '../main/store/data-folder.js';
import { startModelProvider } from '../test/fixtures/model-provider/provider.js';
import { freePort, makeTestCa, Rsyslog } from '../test/support/rsyslog.js';
import { percentile, round } from './stats.js';
import { timed } from './turn.js';
import { median, ROUNDS } from './warm-turn.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const KEY = 'sk-ant-bench-turn-0000000000000000';
const BACKLOG = 100_000;

/**
 * The receiver stands for a SIEM on another machine: here it shares the two cores, so its threads
 * run at the lowest priority and what it costs to receive is not counted as the turn's.
 */
function lowerEveryThread(pid: number): void {
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) os.setPriority(Number(tid), os.constants.priority.PRIORITY_LOW);
}

/** Ends the background sender the "on" turns started (it would send from a folder about to be removed). */
function stopSender(home: string): void {
  const sender = runningSender(home);
  if (sender !== null && sender.pid > 0) process.kill(sender.pid, 'SIGKILL');
}

/** A conversation of BACKLOG events; returns its id. */
function seedBacklog(home: string): string {
  const core = new DataFolder(home);
  try {
    const store = core.store(parseNamespace('default'));
    const agent = store.agents.publish('backlog', { instructions: '' });
    const conversation = store.conversations.create({ agentId: agent.agentId, agentVersion: agent.version, title: 'backlog' });
    for (let start = 0; start < BACKLOG; start += 1_000) {
      store.journal.appendMany(conversation.id, Array.from({ length: 1_000 }, (_, i) => ({ type: 'usage', payload: { inputTokens: start + i, outputTokens: 1, cacheReadTokens: 0, cacheCreationTokens: 0, costUsd: null } })));
    }
    return conversation.id;
  } finally {
    core.close();
  }
}

/** Queues the backlog conversation again (the sink took it in an earlier turn); returns what waits in all. */
function requeue(home: string, conversationId: string): number {
  const core = new DataFolder(home);
  try {
    const store = core.store(parseNamespace('default'));
    store.db.prepare('DELETE FROM audit_cursor WHERE conversation_id = ?').run(conversationId);
    return store.audit.backlog().count;
  } finally {
    core.close();
  }
}

function waiting(home: string): number {
  const core = new DataFolder(home);
  try {
    return core.readOnlyStore(parseNamespace('default')).audit.backlog().count;
  } finally {
    core.close();
  }
}

export async function benchTurnAuditSink(): Promise<Record<string, unknown>> {
  const provider = await startModelProvider();
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-bench-turn-audit-'));
  const ca = makeTestCa(scratch);
  const rsyslog = new Rsyslog(scratch, await freePort(), ca);
  try {
    await rsyslog.start();
    lowerEveryThread(rsyslog.pid!);
    const [home, tmp, on, off] = ['home', 'tmp', 'ward-on', 'ward-off'].map((name) => path.join(scratch, name)) as [string, string, string, string];
    for (const dir of [home, tmp, on, off]) fs.mkdirSync(dir, { mode: 0o700 });
    const backlogId = seedBacklog(on);
    seedBacklog(off);
    const policy = path.join(scratch, 'policy.json');
    fs.writeFileSync(policy, JSON.stringify({ auditSink: { syslog: { host: 'localhost', port: rsyslog.port, caFile: ca.caFile } } }), { mode: 0o644 });
    const base = { PATH: process.env.PATH ?? '', HOME: home, TMPDIR: tmp, WARD_SANDBOX: 'off', WARD_MODEL_BASE_URL: provider.url, WARD_MODEL: DEFAULT_MODEL, ANTHROPIC_API_KEY: KEY, ...(process.env.DBUS_SESSION_BUS_ADDRESS === undefined ? {} : { DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS }) };
    const turn = async (sink: boolean) => {
      provider.push({ blocks: [{ type: 'text', text: 'Hello.' }] });
      const env = sink ? { ...base, WARD_HOME: on, WARD_POLICY: policy } : { ...base, WARD_HOME: off };
      return (await timed(process.execPath, [path.join(ROOT, 'bin', 'ward.js'), 'run', '--new', '--', 'hi'], env, scratch, '', (text) => text.length > 0)).totalMs;
    };
    const loadAtStart = os.loadavg()[0]!;
    await turn(true);
    await turn(false);
    const rounds = Math.max(ROUNDS, 9);
    const samples = { on: [] as number[], off: [] as number[] };
    // Per "on" turn: events waiting when it started and what the sink took while it ran.
    const drained: number[] = [];
    let stillWaiting = 0;
    for (let round = 0; round < rounds; round++) {
      // The order alternates, so neither always runs right after the other.
      for (const sink of round % 2 === 0 ? [true, false] : [false, true]) {
        if (!sink) {
          samples.off.push(await turn(false));
          continue;
        }
        const before = requeue(on, backlogId);
        samples.on.push(await turn(true));
        stillWaiting = waiting(on);
        drained.push(before - stillWaiting);
      }
    }
    const ratioMedian = percentile(samples.on.map((ms, i) => ms / samples.off[i]!), 50);
    const ratioOfMedians = median(samples.on) / median(samples.off);
    return {
      rounds,
      loadAtStartAndEnd: [round(loadAtStart, 1), round(os.loadavg()[0]!, 1)],
      sinkOnMedianMs: median(samples.on),
      sinkOffMedianMs: median(samples.off),
      ratioMedian: round(ratioMedian, 3),
      ratioOfMedians: round(ratioOfMedians, 3),
      // The sender did work during every "on" turn and was still draining when it ended.
      takenDuringTurnMin: Math.min(...drained),
      takenDuringTurnMedian: median(drained),
      receivedAtRsyslog: rsyslog.ids().length,
      stillWaitingAfterLastTurn: stillWaiting,
      target: 'sink on / sink off <= 1.02 (median of pair ratios and ratio of medians)',
      pass: ratioMedian <= 1.02 && ratioOfMedians <= 1.02 && Math.min(...drained) > 0 && stillWaiting > 0,
    };
  } finally {
    stopSender(path.join(scratch, 'ward-on'));
    await rsyslog.stop();
    await provider.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}
