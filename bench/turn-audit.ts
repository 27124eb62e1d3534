/**
 * Issue 28: a turn with the audit sink on costs the turn nothing (goal: ratio <= 1.02). A whole
 * `ward run --new -- hi` text turn (WARD_SANDBOX=off, the scripted provider) with an admin policy
 * naming a real rsyslog over TLS and a backlog of 100,000 events waiting; against the same turn
 * with no sink, alternating in one run. Before every "on" turn the backlog is queued again (its
 * cursor removed) and the background sender started as a turn's end starts it (`ward audit send
 * --background`, lowest priority), and the turn begins once it is draining: each "on" turn runs
 * during a drain. The sender is killed after the turn, so no "off" turn runs beside it. rsyslog,
 * on this machine in place of a remote SIEM, runs at the lowest priority.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { runningSender } from '../main/audit/sender-lock.js';
import { isProcessAlive } from '../main/base/process.js';
import { lowestPriority } from '../main/cli/background-sender.js';
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

/**
 * Starts the background sender as a turn's end does (`ward audit send --background`, lowest
 * priority) and waits until it is draining, so the next turn runs during a drain.
 */
async function startDraining(env: NodeJS.ProcessEnv, home: string, before: number): Promise<void> {
  const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'ward.js'), 'audit', 'send', '--background'], { env, detached: true, stdio: 'ignore' });
  lowestPriority(child.pid!);
  child.unref();
  const deadline = Date.now() + 60_000;
  while (waiting(home) >= before) {
    if (Date.now() > deadline) throw new Error('the background sender did not start draining within 60 s');
    await sleep(20);
  }
}

/** Ends the background sender, and waits until it is gone: no "off" turn runs beside it. */
async function stopSender(home: string): Promise<void> {
  const sender = runningSender(home);
  if (sender === null || sender.pid <= 0) return;
  process.kill(sender.pid, 'SIGKILL');
  const deadline = Date.now() + 10_000;
  while (isProcessAlive(sender.pid) && Date.now() < deadline) await sleep(10);
  fs.rmSync(path.join(home, 'audit-sender.lock'), { force: true });
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
    const onEnv = { ...base, WARD_HOME: on, WARD_POLICY: policy };
    const turn = async (sink: boolean) => {
      provider.push({ blocks: [{ type: 'text', text: 'Hello.' }] });
      const env = sink ? onEnv : { ...base, WARD_HOME: off };
      return (await timed(process.execPath, [path.join(ROOT, 'bin', 'ward.js'), 'run', '--new', '--', 'hi'], env, scratch, '', (text) => text.length > 0)).totalMs;
    };
    const loadAtStart = os.loadavg()[0]!;
    await turn(true);
    await stopSender(on);
    await turn(false);
    const rounds = Math.max(ROUNDS, 9);
    const samples = { on: [] as number[], off: [] as number[] };
    // Per "on" turn: what the sender took while it ran.
    const drained: number[] = [];
    let stillWaiting = 0;
    for (let round = 0; round < rounds; round++) {
      // The order alternates, so neither always runs right after the other.
      for (const sink of round % 2 === 0 ? [true, false] : [false, true]) {
        if (!sink) {
          samples.off.push(await turn(false));
          continue;
        }
        await startDraining(onEnv, on, requeue(on, backlogId));
        const atStart = waiting(on);
        samples.on.push(await turn(true));
        stillWaiting = waiting(on);
        await stopSender(on);
        drained.push(atStart - stillWaiting);
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
    await stopSender(path.join(scratch, 'ward-on'));
    await rsyslog.stop();
    await provider.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}
