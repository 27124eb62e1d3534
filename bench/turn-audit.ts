/**
 * Issue 28: a turn with the audit sink on costs the turn nothing (goal: ratio <= 1.02). A whole
 * `ward run --new -- hi` text turn (WARD_SANDBOX=off, the scripted provider) with an admin policy
 * naming a real rsyslog over TLS and a backlog of 100,000 events waiting; against the same turn
 * with no sink, and the same turn with a sink that accepts and never answers, rotating in one run.
 * Before every "on" turn the backlog is queued again (its cursor removed) and the background
 * sender started as a turn's end starts it (`ward audit send --background`, lowest priority), and
 * the turn begins at a random moment (0-1 s) once it is draining: each "on" turn runs during a
 * drain, which after a turn goes in small batches with rests (main/audit/delivery.ts). Before every
 * "hanging" turn the sender is started against the silent sink and the turn begins once it
 * connected. The sender is killed after each turn, so no "off" turn runs beside it. rsyslog, on
 * this machine in place of a remote SIEM, runs at the lowest priority.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
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
 * priority) and waits until `busy` says it is at work, so the next turn runs beside that work.
 */
async function startSender(env: NodeJS.ProcessEnv, busy: () => boolean): Promise<void> {
  const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'ward.js'), 'audit', 'send', '--background'], { env, detached: true, stdio: 'ignore' });
  lowestPriority(child.pid!);
  child.unref();
  const deadline = Date.now() + 60_000;
  while (!busy()) {
    if (Date.now() > deadline) throw new Error('the background sender did not start within 60 s');
    await sleep(20);
  }
}

/** CPU time (user + system, ms) the data folder's background sender has used so far; 0 when none runs. */
function senderCpuMs(home: string): number {
  const sender = runningSender(home);
  if (sender === null || sender.pid <= 0) return 0;
  try {
    const stat = fs.readFileSync(`/proc/${sender.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return 0;
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

/** A sink that accepts connections and never answers (not even the TLS handshake): it counts them. */
async function startHangingSink(): Promise<{ port: number; connections: () => number; close: () => void }> {
  const sockets: net.Socket[] = [];
  const server = net.createServer((socket) => void sockets.push(socket.on('error', () => undefined)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    connections: () => sockets.length,
    close: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

type Arm = 'on' | 'off' | 'hang';
/** The order of the three arms rotates each round, so none always runs right after another. */
const ORDERS: readonly (readonly Arm[])[] = [
  ['on', 'off', 'hang'],
  ['off', 'hang', 'on'],
  ['hang', 'on', 'off'],
];

export async function benchTurnAuditSink(): Promise<Record<string, unknown>> {
  const provider = await startModelProvider();
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-bench-turn-audit-'));
  const ca = makeTestCa(scratch);
  const rsyslog = new Rsyslog(scratch, await freePort(), ca);
  const hanging = await startHangingSink();
  const [home, tmp, on, off, hang] = ['home', 'tmp', 'ward-on', 'ward-off', 'ward-hang'].map((name) => path.join(scratch, name)) as [string, string, string, string, string];
  try {
    await rsyslog.start();
    lowerEveryThread(rsyslog.pid!);
    for (const dir of [home, tmp, on, off, hang]) fs.mkdirSync(dir, { mode: 0o700 });
    const backlogId = seedBacklog(on);
    seedBacklog(off);
    seedBacklog(hang);
    const policy = (name: string, port: number) => {
      const file = path.join(scratch, name);
      fs.writeFileSync(file, JSON.stringify({ auditSink: { syslog: { host: 'localhost', port, caFile: ca.caFile } } }), { mode: 0o644 });
      return file;
    };
    const base = { PATH: process.env.PATH ?? '', HOME: home, TMPDIR: tmp, WARD_SANDBOX: 'off', WARD_MODEL_BASE_URL: provider.url, WARD_MODEL: DEFAULT_MODEL, ANTHROPIC_API_KEY: KEY, ...(process.env.DBUS_SESSION_BUS_ADDRESS === undefined ? {} : { DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS }) };
    const envs: Record<Arm, Record<string, string>> = {
      on: { ...base, WARD_HOME: on, WARD_POLICY: policy('policy.json', rsyslog.port) },
      off: { ...base, WARD_HOME: off },
      hang: { ...base, WARD_HOME: hang, WARD_POLICY: policy('hanging-policy.json', hanging.port) },
    };
    let turns = 0;
    const turn = async (arm: Arm) => {
      provider.push({ blocks: [{ type: 'text', text: 'Hello.' }] });
      const trace: Record<string, string> = process.env.WARD_BENCH_TRACE_DIR === undefined ? {} : { WARD_TRACE_FILE: path.join(process.env.WARD_BENCH_TRACE_DIR, `${arm}-${turns++}.trace`) };
      return (await timed(process.execPath, [path.join(ROOT, 'bin', 'ward.js'), 'run', '--new', '--', 'hi'], { ...envs[arm], ...trace }, scratch, '', (text) => text.length > 0)).totalMs;
    };
    const loadAtStart = os.loadavg()[0]!;
    for (const arm of ['on', 'off', 'hang'] as const) {
      await turn(arm);
      await stopSender(envs[arm].WARD_HOME!);
    }
    const rounds = Math.max(ROUNDS, 9);
    const samples: Record<Arm, number[]> = { on: [], off: [], hang: [] };
    // Per "on" turn: what the sender took while it ran.
    const drained: number[] = [];
    // Per "on" and "hanging" turn: the CPU time the sender used while it ran (Linux /proc, 10 ms ticks).
    const senderCpu = { on: [] as number[], hang: [] as number[] };
    let stillWaiting = 0;
    for (let round = 0; round < rounds; round++) {
      for (const arm of ORDERS[round % ORDERS.length]!) {
        if (arm === 'off') {
          samples.off.push(await turn('off'));
        } else if (arm === 'hang') {
          // The turn runs while the sender waits on a sink that took its connection and never answers.
          const connected = hanging.connections();
          await startSender(envs.hang, () => hanging.connections() > connected);
          const cpuBefore = senderCpuMs(hang);
          samples.hang.push(await turn('hang'));
          senderCpu.hang.push(senderCpuMs(hang) - cpuBefore);
          await stopSender(hang);
        } else {
          const before = requeue(on, backlogId);
          await startSender(envs.on, () => waiting(on) < before);
          // The turn starts at any moment of the drain: in a batch or in the rest after one.
          await sleep(Math.random() * 1_000);
          const atStart = waiting(on);
          const cpuBefore = senderCpuMs(on);
          samples.on.push(await turn('on'));
          senderCpu.on.push(senderCpuMs(on) - cpuBefore);
          stillWaiting = waiting(on);
          await stopSender(on);
          drained.push(atStart - stillWaiting);
        }
      }
    }
    const ratios = (arm: 'on' | 'hang') => ({ median: percentile(samples[arm].map((ms, i) => ms / samples.off[i]!), 50), ofMedians: median(samples[arm]) / median(samples.off) });
    const draining = ratios('on');
    const stuck = ratios('hang');
    return {
      rounds,
      loadAtStartAndEnd: [round(loadAtStart, 1), round(os.loadavg()[0]!, 1)],
      sinkOnMedianMs: median(samples.on),
      sinkOffMedianMs: median(samples.off),
      ratioMedian: round(draining.median, 3),
      ratioOfMedians: round(draining.ofMedians, 3),
      // What the sender took during each "on" turn: the batch it was sending when the turn began, and trickles after the turn's start.
      takenDuringTurnMin: Math.min(...drained),
      takenDuringTurnMedian: median(drained),
      receivedAtRsyslog: rsyslog.ids().length,
      stillWaitingAfterLastTurn: stillWaiting,
      senderCpuMsDuringTurnMedian: { on: median(senderCpu.on), hanging: median(senderCpu.hang) },
      hangingSinkMedianMs: median(samples.hang),
      hangingSinkRatioMedian: round(stuck.median, 3),
      hangingSinkRatioOfMedians: round(stuck.ofMedians, 3),
      target: 'sink on (draining) / sink off <= 1.02 and hanging sink / sink off <= 1.02 (median of pair ratios and ratio of medians)',
      // Each "on" turn began mid-drain (startSender waited for it) and the drain was still going at the end.
      pass: Math.max(draining.median, draining.ofMedians, stuck.median, stuck.ofMedians) <= 1.02 && stillWaiting > 0,
    };
  } finally {
    for (const dir of [on, hang]) await stopSender(dir);
    hanging.close();
    await rsyslog.stop();
    await provider.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}
