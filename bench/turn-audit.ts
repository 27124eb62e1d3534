/**
 * Issue 28: a turn with the audit sink on costs the turn nothing (goal: ratio <= 1.02). A whole
 * `ward run --new -- hi` text turn (WARD_SANDBOX=off, the scripted provider) with an admin policy
 * naming a real rsyslog over TLS and a backlog of 100,000 events waiting, so the delivery loop
 * sends while the turn runs; against the same turn with no sink, alternating in one run.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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

function seedBacklog(home: string): void {
  const core = new DataFolder(home);
  try {
    const store = core.store(parseNamespace('default'));
    const agent = store.agents.publish('backlog', { instructions: '' });
    const conversation = store.conversations.create({ agentId: agent.agentId, agentVersion: agent.version, title: 'backlog' });
    for (let start = 0; start < BACKLOG; start += 1_000) {
      store.journal.appendMany(conversation.id, Array.from({ length: 1_000 }, (_, i) => ({ type: 'usage', payload: { inputTokens: start + i, outputTokens: 1, cacheReadTokens: 0, cacheCreationTokens: 0, costUsd: null } })));
    }
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
    const [home, tmp, on, off] = ['home', 'tmp', 'ward-on', 'ward-off'].map((name) => path.join(scratch, name)) as [string, string, string, string];
    for (const dir of [home, tmp, on, off]) fs.mkdirSync(dir, { mode: 0o700 });
    seedBacklog(on);
    seedBacklog(off);
    const policy = path.join(scratch, 'policy.json');
    fs.writeFileSync(policy, JSON.stringify({ auditSink: { syslog: { host: 'localhost', port: rsyslog.port, caFile: ca.caFile } } }), { mode: 0o644 });
    const base = { PATH: process.env.PATH ?? '', HOME: home, TMPDIR: tmp, WARD_SANDBOX: 'off', WARD_MODEL_BASE_URL: provider.url, WARD_MODEL: DEFAULT_MODEL, ANTHROPIC_API_KEY: KEY, ...(process.env.DBUS_SESSION_BUS_ADDRESS === undefined ? {} : { DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS }) };
    const turn = async (sink: boolean) => {
      provider.push({ blocks: [{ type: 'text', text: 'Hello.' }] });
      const env = sink ? { ...base, WARD_HOME: on, WARD_POLICY: policy } : { ...base, WARD_HOME: off };
      return (await timed(process.execPath, [path.join(ROOT, 'bin', 'ward.js'), 'run', '--new', '--', 'hi'], env, scratch, '', (text) => text.length > 0)).totalMs;
    };
    await turn(true);
    await turn(false);
    const samples = { on: [] as number[], off: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      // The order alternates, so neither always runs right after the other.
      for (const sink of round % 2 === 0 ? [true, false] : [false, true]) samples[sink ? 'on' : 'off'].push(await turn(sink));
    }
    const ratio = percentile(samples.on.map((ms, i) => ms / samples.off[i]!), 50);
    const onStore = new DataFolder(on);
    const waiting = onStore.readOnlyStore(parseNamespace('default')).audit.backlog().count;
    onStore.close();
    return {
      rounds: ROUNDS,
      sinkOnMedianMs: median(samples.on),
      sinkOffMedianMs: median(samples.off),
      ratioMedian: round(ratio, 3),
      // Under heavy load the pairs scatter; the medians' ratio is the steadier reading.
      ratioOfMedians: round(median(samples.on) / median(samples.off), 3),
      // The sink did work during the turns: what rsyslog received, what still waits.
      receivedAtRsyslog: rsyslog.ids().length,
      stillWaiting: waiting,
      target: 'sink on / sink off <= 1.02 (median of pair ratios)',
      pass: ratio <= 1.02 && rsyslog.ids().length > 0,
    };
  } finally {
    await rsyslog.stop();
    await provider.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}
