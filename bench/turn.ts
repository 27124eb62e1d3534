/**
 * Turn latency (issues 19, 29): a whole `ward run --new -- hi` text turn against the bare pinned
 * CLI (`claude -p` with the flags Ward passes, minus Ward's MCP server and approval tool) on the
 * same loopback scripted provider, run in turn so both see the same load. Ward runs twice per
 * round: in its own process (WARD_SERVICE=off) with the OS sandbox as configured (auto) and with
 * WARD_SANDBOX=off, and sandboxed through the `ward` background service. Then the desktop's
 * warm follow-up turn against a warm bare CLI (one process, stream-json input). Ward's
 * WARD_TRACE_FILE marks (main/base/trace.ts) give its time before the spawn and where it goes.
 * `pairs` holds issue 29's Done-when figures.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_AGENT_SPEC } from '../main/agents/spec.js';
import { DEFAULT_MODEL } from '../main/providers/model-profile.js';
import { buildCliArgs } from '../main/runner/argv.js';
import { buildChildEnv } from '../main/runner/env.js';
import { verifyPinnedCli } from '../main/runner/pin.js';
import { startModelProvider } from '../test/fixtures/model-provider/provider.js';
import { percentile, round } from './stats.js';
import { WarmBareCli } from './warm-cli.js';
import { followUps, median, ROUNDS, type Sample } from './warm-turn.js';

const ROOT = path.resolve(import.meta.dirname, '..');
/** Another built Ward checkout (an earlier commit) to run in the same rounds: a change's effect, under the same load. */
const COMPARE = process.env.WARD_BENCH_TURN_COMPARE;
const KEY = 'sk-ant-bench-turn-0000000000000000';
const TURN_TIMEOUT_MS = 60_000;
/**
 * The breakdown: each step as [first mark, last mark] (process-start is 0). Steps that run at
 * once (the store open beside the run code, broker, gateway and sandbox probe; the pin check and
 * the keychain read) share their first mark.
 */
const STEPS: readonly (readonly [string, string, string])[] = [
  ['node start + entry load', 'process-start', 'modules-loaded'],
  ['command load', 'modules-loaded', 'command-loaded'],
  ['app code load + policy + store open', 'command-loaded', 'store-open'],
  // These four start before the store opens, and go on while it does.
  ['run code load', 'command-loaded', 'runs-loaded'],
  ['broker start', 'command-loaded', 'broker-started'],
  ['gateway start', 'command-loaded', 'gateway-started'],
  ['sandbox probe', 'command-loaded', 'sandbox-probed'],
  ['run set-up (all of the above four) after the store opened', 'store-open', 'runs-ready'],
  ['preflight + admission', 'runs-ready', 'admitted'],
  ['  of which the pin check', 'runs-ready', 'pin-checked'],
  ['  of which the keychain / credential (at once)', 'runs-ready', 'credential-read'],
  ['journal run_started', 'admitted', 'run-started'],
  ["the turn's readiness (the preflight's check, reused)", 'run-started', 'prepared'],
  ['waiting for the broker + gateway', 'prepared', 'services-awaited'],
  ['permissions, broker + gateway registration', 'services-awaited', 'tools-open'],
  ['run folder + sandbox launch', 'tools-open', 'sandbox-ready'],
  ['  of which waiting for the sandbox runtime', 'launch', 'sandbox-runtime-ready'],
  ['  of which wrapping the command', 'sandbox-runtime-ready', 'sandbox-ready'],
  ['spawn', 'sandbox-ready', 'spawned'],
  ['CLI start to system/init', 'spawned', 'cli-init'],
  ['system/init to first token', 'cli-init', 'first-token'],
  ['first token to result', 'first-token', 'cli-result'],
  ['result to CLI exit', 'cli-result', 'cli-exited'],
  ['settle + J3 anchor', 'cli-exited', 'anchored'],
  ['close (broker, gateway, sandbox, stores)', 'anchored', 'app-closed'],
];

export function timed(binary: string, args: readonly string[], env: Record<string, string>, cwd: string, input: string, isToken: (chunk: string) => boolean): Promise<Omit<Sample, 'marks'>> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    let first: bigint | undefined;
    let init: bigint | undefined;
    let stderr = '';
    const child = spawn(binary, args, { env, cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    const timer = setTimeout(() => child.kill('SIGKILL'), TURN_TIMEOUT_MS);
    child.stdout.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      if (init === undefined && text.includes('"subtype":"init"')) init = process.hrtime.bigint();
      if (first === undefined && isToken(text)) first = process.hrtime.bigint();
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      const end = process.hrtime.bigint();
      if (code !== 0 || first === undefined) return reject(new Error(`${path.basename(binary)} exited ${String(code)} without an answer: ${stderr.slice(-500)}`));
      resolve({ totalMs: Number(end - start) / 1e6, firstTokenMs: Number(first - start) / 1e6, ...(init === undefined ? {} : { initMs: Number(init - start) / 1e6 }) });
    });
    child.stdin.end(input);
  });
}

/** `node -e 0` spawn to exit: what the machine's load makes of a process start, for reading the absolute figures. */
function nodeStart(): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    child.on('error', reject);
    child.on('close', () => resolve(Number(process.hrtime.bigint() - start) / 1e6));
  });
}

function readMarks(file: string): Record<string, number> {
  const marks: Record<string, number> = {};
  for (const line of fs.readFileSync(file, 'utf8').trim().split('\n')) {
    const [name, ms] = line.split(' ');
    if (name !== undefined && ms !== undefined) marks[name] ??= Number(ms);
  }
  fs.rmSync(file, { force: true });
  return marks;
}


interface Summary extends Record<string, unknown> {
  readonly ratioMedian: number;
  readonly wardPreSpawnMedianMs: number;
}

function summary(ward: Sample[], bare: Sample[]): Summary {
  const ratios = ward.map((sample, i) => sample.totalMs / bare[i]!.totalMs);
  const preSpawn = ward.map((sample) => sample.marks.spawned ?? Number.NaN);
  const breakdownMs: Record<string, number> = {};
  for (const [name, from, to] of STEPS) {
    const steps = ward.filter((sample) => sample.marks[to] !== undefined && (from === 'process-start' || sample.marks[from] !== undefined));
    if (steps.length > 0) breakdownMs[name] = median(steps.map((sample) => sample.marks[to]! - (from === 'process-start' ? 0 : sample.marks[from]!)));
  }
  return {
    wardTotalMedianMs: median(ward.map((sample) => sample.totalMs)),
    bareTotalMedianMs: median(bare.map((sample) => sample.totalMs)),
    ratioMedian: round(percentile(ratios, 50), 2),
    wardPreSpawnMedianMs: median(preSpawn),
    wardFirstTokenMedianMs: median(ward.map((sample) => sample.firstTokenMs)),
    bareFirstTokenMedianMs: median(bare.map((sample) => sample.firstTokenMs)),
    // Against the breakdown's "CLI start to system/init": what Ward's MCP server and approval tool cost the CLI's start.
    bareCliInitMedianMs: median(bare.map((sample) => sample.initMs ?? Number.NaN)),
    firstTokenRatioMedian: round(percentile(ward.map((sample, i) => sample.firstTokenMs / bare[i]!.firstTokenMs), 50), 2),
    breakdownMs,
    pass: percentile(ratios, 50) <= 1.1 && percentile(preSpawn, 50) <= 100,
  };
}

export async function benchTurn(): Promise<Record<string, unknown>> {
  const provider = await startModelProvider();
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-bench-turn-'));
  let stopService: (() => Promise<unknown>) | undefined;
  try {
    const home = path.join(scratch, 'home');
    const wardHome = path.join(scratch, 'ward');
    const tmp = path.join(scratch, 'tmp');
    for (const dir of [home, wardHome, tmp]) fs.mkdirSync(dir, { mode: 0o700 });
    const trace = path.join(scratch, 'trace');
    const base = { PATH: process.env.PATH ?? '', HOME: home, TMPDIR: tmp, ...(process.env.DBUS_SESSION_BUS_ADDRESS === undefined ? {} : { DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS }) };
    // The key comes from the environment after the keychain is asked (nothing stored), as for a first user.
    const wardEnv = { ...base, WARD_HOME: wardHome, WARD_MODEL_BASE_URL: provider.url, WARD_MODEL: DEFAULT_MODEL, ANTHROPIC_API_KEY: KEY, WARD_TRACE_FILE: trace };
    // The compared checkout keeps its own data folder: the pin's verification record names one binary, and each checkout has its own.
    const comparedHome = path.join(scratch, 'ward-compared');
    fs.mkdirSync(comparedHome, { mode: 0o700 });
    const ward = async (sandbox: 'auto' | 'off', root = ROOT): Promise<Sample> => {
      provider.push({ blocks: [{ type: 'text', text: 'Hello.' }] });
      const env = { ...wardEnv, WARD_SANDBOX: sandbox, WARD_SERVICE: 'off', ...(root === ROOT ? {} : { WARD_HOME: comparedHome }) };
      const sample = await timed(process.execPath, [path.join(root, 'bin', 'ward.js'), 'run', '--new', '--', 'hi'], env, scratch, '', (text) => text.length > 0);
      return { ...sample, marks: readMarks(trace) };
    };
    // Through the service (issue 29): its own trace file, so its work between turns (the next CLI started ahead) marks no in-process sample.
    const runtime = path.join(scratch, 'run-user');
    fs.mkdirSync(runtime, { mode: 0o700 });
    const serviceEnv = { ...wardEnv, WARD_SANDBOX: 'auto', WARD_SERVICE: 'on', XDG_RUNTIME_DIR: runtime, WARD_TRACE_FILE: path.join(scratch, 'trace-service') };
    stopService = () => timed(process.execPath, [path.join(ROOT, 'bin', 'ward.js'), 'service', 'stop'], serviceEnv, scratch, '', () => true);
    const viaService = async (): Promise<Sample> => {
      provider.push({ blocks: [{ type: 'text', text: 'Hello.' }] });
      return { ...(await timed(process.execPath, [path.join(ROOT, 'bin', 'ward.js'), 'run', '--new', '--', 'hi'], serviceEnv, scratch, '', (text) => text.length > 0)), marks: {} };
    };

    // The bare CLI: Ward's argv and environment for a new session, with no MCP server and no one to ask; `claude -p` takes its prompt on stdin as plain text.
    const pinned = await verifyPinnedCli();
    const runFiles = path.join(scratch, 'bare-run');
    fs.mkdirSync(runFiles, { mode: 0o700 });
    fs.writeFileSync(path.join(runFiles, 'mcp.json'), JSON.stringify({ mcpServers: {} }));
    fs.writeFileSync(path.join(runFiles, 'instructions.md'), DEFAULT_AGENT_SPEC.instructions);
    const bareArgs = (sessionId: string, resume: boolean, streamInput: boolean) => {
      const args = buildCliArgs({ sessionId, resume, mcpConfigPath: path.join(runFiles, 'mcp.json'), instructionsPath: path.join(runFiles, 'instructions.md'), model: DEFAULT_MODEL, pinnedTools: [] });
      args.splice(args.indexOf('--permission-prompt-tool'), 2);
      return streamInput ? args : [...args.slice(0, args.indexOf('--input-format')), '--'];
    };
    const bareEnv = (configDir: string) => buildChildEnv({ inherited: base, model: { baseUrl: provider.url, capability: KEY, mode: 'api-key' }, configDir });
    const bare = async (session?: { id: string; configDir: string; workspace: string; resume: boolean }): Promise<Sample> => {
      provider.push({ blocks: [{ type: 'text', text: 'Hello.' }] });
      const configDir = session?.configDir ?? fs.mkdtempSync(path.join(scratch, 'bare-config-'));
      const workspace = session?.workspace ?? fs.mkdtempSync(path.join(scratch, 'bare-workspace-'));
      const args = bareArgs(session?.id ?? randomUUID(), session?.resume ?? false, false);
      return { ...(await timed(pinned.path, args, bareEnv(configDir), workspace, 'hi', (text) => text.includes('"text_delta"'))), marks: {} };
    };
    // The warm bare CLI: the same argv with stream-json input, one process for all its turns.
    const warmBare = async () => {
      const configDir = fs.mkdtempSync(path.join(scratch, 'bare-config-'));
      return new WarmBareCli(pinned.path, bareArgs(randomUUID(), false, true), bareEnv(configDir), fs.mkdtempSync(path.join(scratch, 'bare-workspace-')));
    };

    // Warm-up: the namespace and its keys, the pin record, the page cache for the binary.
    await ward('auto');
    await ward('off');
    await bare();
    // Starts the service; its first turn also leaves a CLI started for the next new conversation.
    await viaService();
    const samples = { bare: [] as Sample[], sandboxed: [] as Sample[], unsandboxed: [] as Sample[], service: [] as Sample[], node: [] as number[], compare: [] as Sample[] };
    if (COMPARE !== undefined) await ward('auto', COMPARE);
    for (let round = 0; round < ROUNDS; round++) {
      // The order rotates, so no variant always runs right after another.
      const order = [
        () => bare().then((s) => samples.bare.push(s)),
        () => ward('auto').then((s) => samples.sandboxed.push(s)),
        () => ward('off').then((s) => samples.unsandboxed.push(s)),
        () => viaService().then((s) => samples.service.push(s)),
        () => nodeStart().then((ms) => samples.node.push(ms)),
      ];
      if (COMPARE !== undefined) order.push(() => ward('auto', COMPARE).then((s) => samples.compare.push(s)));
      for (let i = 0; i < order.length; i++) await order[(i + round) % order.length]!();
    }
    // The bare CLI's own conversation, resumed each round (its first turn made the transcript).
    const resumed = { id: randomUUID(), configDir: fs.mkdtempSync(path.join(scratch, 'bare-config-')), workspace: fs.mkdtempSync(path.join(scratch, 'bare-workspace-')) };
    let bareTurns = 0;
    const bareResume = () => bare({ ...resumed, resume: bareTurns++ > 0 });
    // This process's own turns are traced too (the desktop's warm path runs here).
    const inProcessTrace = path.join(scratch, 'trace-in-process');
    process.env.WARD_TRACE_FILE = inProcessTrace;
    let desktop: Record<string, unknown>;
    let desktopUnsandboxed: Record<string, unknown>;
    try {
      const push = () => provider.push({ blocks: [{ type: 'text', text: 'Hello.' }] });
      desktop = await followUps(wardEnv, push, { resume: bareResume, warm: warmBare }, inProcessTrace, true);
      // The same warm turns with WARD_SANDBOX=off: the sandbox's share of the warm turn.
      desktopUnsandboxed = await followUps({ ...wardEnv, WARD_SANDBOX: 'off' }, push, { resume: bareResume, warm: warmBare }, inProcessTrace, false);
    } finally {
      delete process.env.WARD_TRACE_FILE;
    }
    await stopService();
    const sandboxed = summary(samples.sandboxed, samples.bare);
    const service = summary(samples.service, samples.bare);
    const unsandboxed = summary(samples.unsandboxed, samples.bare);
    return {
      rounds: ROUNDS,
      // Issue 29's Done-when pairs, from this one run (each a median of per-round ratios, or ms).
      pairs: {
        warmDesktopTurnToWarmBareCli: { ratio: desktop.ratioMedian, sandboxOff: desktopUnsandboxed.ratioMedian, goal: '<= 1.10' },
        wardRunNewSandboxedToBareClaudeP: { ratio: service.ratioMedian, inProcess: sandboxed.ratioMedian, goal: '<= 1.0 (service running)' },
        wardRunNewSandboxOffToBareClaudeP: { ratio: unsandboxed.ratioMedian, goal: '<= 1.5 (no service)' },
        wardBeforeTheSpawnMs: { sandboxed: sandboxed.wardPreSpawnMedianMs, sandboxOff: unsandboxed.wardPreSpawnMedianMs, warmDesktopTurn: desktop.wardBeforeTheWriteMedianMs, goal: '<= 100 ms (in-process path)' },
      },
      desktopFollowUp: desktop,
      desktopFollowUpSandboxOff: desktopUnsandboxed,
      target: 'ward run / bare CLI <= 1.10x (median of pair ratios); Ward before the spawn <= 100 ms',
      nodeStartMedianMs: median(samples.node),
      sandboxed,
      unsandboxed,
      service: { totalMedianMs: service.wardTotalMedianMs, bareTotalMedianMs: service.bareTotalMedianMs, ratioMedian: service.ratioMedian, firstTokenRatioMedian: service.firstTokenRatioMedian },
      ...(COMPARE === undefined ? {} : { compared: { checkout: COMPARE, ...summary(samples.compare, samples.bare), sandboxedToCompared: round(percentile(samples.sandboxed.map((sample, i) => sample.totalMs / samples.compare[i]!.totalMs), 50), 2) } }),
    };
  } finally {
    // Never leave a service behind, whatever failed (it would outlive the scratch folder only until its socket check).
    await stopService?.().catch(() => undefined);
    await provider.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}
