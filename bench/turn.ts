/**
 * Turn latency (issues 19, 29): a whole `ward run --new -- hi` text turn against the bare pinned
 * CLI (`claude -p` with the flags Ward passes, minus Ward's MCP server and approval tool) on the
 * same loopback scripted provider, run in turn so both see the same load. Ward runs twice per
 * round: with the OS sandbox as configured (auto) and with WARD_SANDBOX=off. Then the desktop's
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
import { WardApp } from '../main/app/ward-app.js';
import { DEFAULT_MODEL } from '../main/providers/model-profile.js';
import { buildCliArgs } from '../main/runner/argv.js';
import { buildChildEnv } from '../main/runner/env.js';
import { verifyPinnedCli } from '../main/runner/pin.js';
import { traceMark } from '../main/base/trace.js';
import type { Namespace } from '../main/namespaces/namespace.js';
import { startModelProvider } from '../test/fixtures/model-provider/provider.js';
import { percentile, round } from './stats.js';
import { WarmBareCli } from './warm-cli.js';

const ROUNDS = Number(process.env.WARD_BENCH_TURN_ROUNDS ?? 9);
/** How long a person writes a message before Send, after the chat's CLI was asked to start (runs.prepare). */
const WRITING_MS = 1_000;
const ROOT = path.resolve(import.meta.dirname, '..');
/** Another built Ward checkout (an earlier commit) to run in the same rounds: a change's effect, under the same load. */
const COMPARE = process.env.WARD_BENCH_TURN_COMPARE;
const KEY = 'sk-ant-bench-turn-0000000000000000';
const TURN_TIMEOUT_MS = 60_000;
/**
 * The breakdown: each step as [first mark, last mark] (process-start is 0). Steps that run at
 * once (the run code, broker, gateway and sandbox probe; the pin check and the keychain read)
 * share their first mark.
 */
const STEPS: readonly (readonly [string, string, string])[] = [
  ['node start + entry load', 'process-start', 'modules-loaded'],
  ['command load', 'modules-loaded', 'command-loaded'],
  ['app code load + policy + store open', 'command-loaded', 'store-open'],
  ['run code load', 'store-open', 'runs-loaded'],
  ['broker start', 'store-open', 'broker-started'],
  ['gateway start', 'store-open', 'gateway-started'],
  ['sandbox probe', 'store-open', 'sandbox-probed'],
  ['run set-up (all of the above four)', 'store-open', 'runs-ready'],
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

interface Sample {
  /** Spawn to exit of the whole process. */
  readonly totalMs: number;
  /** Spawn to the first answer text on stdout. */
  readonly firstTokenMs: number;
  /** The bare CLI's spawn to its system/init line (Ward's is in its marks). */
  readonly initMs?: number;
  readonly marks: Record<string, number>;
}

function timed(binary: string, args: readonly string[], env: Record<string, string>, cwd: string, input: string, isToken: (chunk: string) => boolean): Promise<Omit<Sample, 'marks'>> {
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

function median(values: number[]): number {
  return round(percentile(values, 50), 1);
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

/** The warm desktop turn's steps, in-process marks relative to the bench's request (`turn-requested`). */
const WARM_STEPS: readonly (readonly [string, string, string])[] = [
  ['request to admission', 'turn-requested', 'admitted'],
  ['admission + journal run_started', 'admitted', 'run-started'],
  ['readiness (pin + credential)', 'run-started', 'prepared'],
  ['  of which the pin check', 'run-started', 'pin-checked'],
  ['  of which the keychain / credential (at once)', 'run-started', 'credential-read'],
  ['permissions + launch spec', 'prepared', 'launch-planned'],
  ['file-change scan before (issue 26)', 'launch-planned', 'changes-before'],
  ['warm session taken', 'changes-before', 'warm-session'],
  ['prompt written (Ward before the spawn)', 'turn-requested', 'spawned'],
  ['CLI: written to system/init', 'spawned', 'cli-init'],
  ['CLI: system/init to first token', 'cli-init', 'first-token'],
  ['CLI: first token to result', 'first-token', 'cli-result'],
  ['result to released', 'cli-result', 'released'],
  ['file-change scan after (issue 26)', 'released', 'changes-after'],
  ['settle + run_finished', 'changes-after', 'run-finished'],
  ['J3 anchor', 'run-finished', 'anchored'],
];

/** The marks of the last traced turn in `file` (this process's), relative to its `turn-requested`. */
function lastTurnMarks(file: string): Record<string, number> {
  const lines = fs.readFileSync(file, 'utf8').trim().split('\n');
  const from = lines.findLastIndex((line) => line.startsWith('turn-requested '));
  const marks: Record<string, number> = {};
  for (const line of lines.slice(Math.max(0, from))) {
    const [name, ms] = line.split(' ');
    if (name !== undefined && ms !== undefined) marks[name] ??= Number(ms);
  }
  return marks;
}

function breakdown(samples: readonly Record<string, number>[], steps: readonly (readonly [string, string, string])[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, from, to] of steps) {
    const found = samples.filter((marks) => marks[from] !== undefined && marks[to] !== undefined);
    if (found.length > 0) out[name] = median(found.map((marks) => marks[to]! - marks[from]!));
  }
  return out;
}

interface Bare {
  /** `claude -p --resume` of the bare conversation: a new process per turn. */
  resume(): Promise<Sample>;
  /** One bare CLI process kept between turns (stream-json input). */
  warm(): Promise<WarmBareCli>;
}

/**
 * The desktop's follow-up turn: one long-lived app with warm sessions, one conversation; each
 * round times startTurn to the settled run (journaled, anchored) against a warm bare CLI's turn
 * (issue 29's pair) and a bare `claude -p --resume` (issue 19's), run in turn. Ward's in-process
 * marks (WARD_TRACE_FILE, read at each mark) say where its time goes.
 */
async function followUps(env: Record<string, string>, push: () => void, bare: Bare, traceFile: string): Promise<Record<string, unknown>> {
  const app = new WardApp({ env, run: { warmSessions: true } });
  const warmBare = await bare.warm();
  try {
    const namespace = app.namespaces.fromFlag(undefined).namespace;
    const runs = await app.runs();
    const turn = async (conversationId?: string) => {
      push();
      traceMark('turn-requested');
      const start = performance.now();
      const handle = runs.startTurn({ namespace, prompt: 'hi', ...(conversationId === undefined ? {} : { conversationId }) });
      // The first answer text as the desktop sees it: a committed journal event of this run.
      let firstToken: number | undefined;
      const unsubscribe = app.folder.store(namespace).journal.subscribe(handle.conversationId, handle.cursor, (event) => {
        if (firstToken === undefined && event.runId === handle.runId && (event.type === 'assistant_delta' || event.type === 'assistant_text')) firstToken = performance.now() - start;
      });
      const outcome = await handle.done;
      unsubscribe();
      if (outcome.state !== 'succeeded') throw new Error(`desktop turn ${outcome.state}: ${String(outcome.reason)}`);
      return { ms: performance.now() - start, firstTokenMs: firstToken ?? Number.NaN, conversationId: handle.conversationId, pid: handle.childPid() };
    };
    const first = await turn();
    await bare.resume();
    push();
    await warmBare.turn('hi');
    const warm: number[] = [];
    const warmFirstToken: number[] = [];
    const warmMarks: Record<string, number>[] = [];
    const resumed: number[] = [];
    const bareWarm: number[] = [];
    const bareWarmFirstToken: number[] = [];
    const pids = new Set<number | undefined>();
    for (let round = 0; round < ROUNDS; round++) {
      const trio = [
        async () => resumed.push((await bare.resume()).totalMs),
        async () => {
          push();
          const sample = await warmBare.turn('hi');
          bareWarm.push(sample.ms);
          bareWarmFirstToken.push(sample.firstTokenMs);
        },
        async () => {
          const next = await turn(first.conversationId);
          pids.add(next.pid);
          warm.push(next.ms);
          warmFirstToken.push(next.firstTokenMs);
          warmMarks.push(lastTurnMarks(traceFile));
        },
      ];
      for (let i = 0; i < trio.length; i++) await trio[(i + round) % trio.length]!();
    }
    const ratio = percentile(warm.map((ms, i) => ms / bareWarm[i]!), 50);
    const preSpawn = warmMarks.map((marks) => (marks.spawned ?? Number.NaN) - (marks['turn-requested'] ?? Number.NaN));
    return {
      firstTurnMs: round(first.ms, 1),
      followUpMedianMs: median(warm),
      bareWarmMedianMs: median(bareWarm),
      ratioMedian: round(ratio, 2),
      followUpFirstTokenMedianMs: median(warmFirstToken),
      bareWarmFirstTokenMedianMs: median(bareWarmFirstToken),
      firstTokenRatioMedian: round(percentile(warmFirstToken.map((ms, i) => ms / bareWarmFirstToken[i]!), 50), 2),
      wardBeforeTheWriteMedianMs: median(preSpawn),
      breakdownMs: breakdown(warmMarks, WARM_STEPS),
      // One CLI process served every follow-up: the session stayed warm.
      cliProcesses: pids.size,
      target: 'follow-up / warm bare CLI <= 1.10x',
      pass: ratio <= 1.1 && pids.size === 1,
      bareResumeMedianMs: median(resumed),
      resumeRatioMedian: round(percentile(warm.map((ms, i) => ms / resumed[i]!), 50), 2),
      reopenedChat: await reopenedChats(runs, namespace, first.conversationId, [...pids].at(-1), turn, bare.resume),
    };
  } finally {
    await warmBare.close();
    await app.close();
  }
}

/**
 * A chat opened again after its CLI ended (an idle close, a restart): its first message with
 * the CLI started as the person began writing (runs.prepare), and without, against bare --resume.
 */
async function reopenedChats(
  runs: Awaited<ReturnType<WardApp['runs']>>,
  namespace: Namespace,
  conversationId: string,
  lastPid: number | undefined,
  turn: (conversationId: string) => Promise<{ ms: number; pid: number | undefined }>,
  bareResume: () => Promise<Sample>,
): Promise<Record<string, number>> {
  const reopened = async (ahead: boolean) => {
    if (lastPid !== undefined) await endGroup(lastPid);
    if (ahead) {
      const outcome = await runs.prestart({ namespace, conversationId });
      if (outcome !== 'started') throw new Error(`the chat's CLI was not started ahead: ${outcome}`);
      // The message takes a moment to write; Send is timed from here.
      await new Promise((resolve) => setTimeout(resolve, WRITING_MS));
    }
    const next = await turn(conversationId);
    lastPid = next.pid;
    return next.ms;
  };
  const ahead: number[] = [];
  const cold: number[] = [];
  const bareAgain: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const trio = [async () => ahead.push(await reopened(true)), async () => cold.push(await reopened(false)), async () => bareAgain.push((await bareResume()).totalMs)];
    for (let i = 0; i < trio.length; i++) await trio[(i + round) % trio.length]!();
  }
  return {
    startedAheadMedianMs: median(ahead),
    coldMedianMs: median(cold),
    bareResumeMedianMs: median(bareAgain),
    startedAheadRatioMedian: round(percentile(ahead.map((ms, i) => ms / bareAgain[i]!), 50), 2),
    coldRatioMedian: round(percentile(cold.map((ms, i) => ms / bareAgain[i]!), 50), 2),
  };
}

/** Kills a CLI's process group and waits (bounded) until it is gone. */
async function endGroup(pid: number): Promise<void> {
  const alive = () => {
    try {
      process.kill(-pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (alive()) process.kill(-pid, 'SIGKILL');
  for (let waited = 0; alive(); waited += 10) {
    if (waited > 10_000) throw new Error(`CLI group ${pid} outlived SIGKILL by 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export async function benchTurn(): Promise<Record<string, unknown>> {
  const provider = await startModelProvider();
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-bench-turn-'));
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
      const env = { ...wardEnv, WARD_SANDBOX: sandbox, ...(root === ROOT ? {} : { WARD_HOME: comparedHome }) };
      const sample = await timed(process.execPath, [path.join(root, 'bin', 'ward.js'), 'run', '--new', '--', 'hi'], env, scratch, '', (text) => text.length > 0);
      return { ...sample, marks: readMarks(trace) };
    };

    // The bare CLI: Ward's argv and environment for a new session, with no MCP server and no approval tool.
    const pinned = await verifyPinnedCli();
    const runFiles = path.join(scratch, 'bare-run');
    fs.mkdirSync(runFiles, { mode: 0o700 });
    fs.writeFileSync(path.join(runFiles, 'mcp.json'), JSON.stringify({ mcpServers: {} }));
    fs.writeFileSync(path.join(runFiles, 'instructions.md'), DEFAULT_AGENT_SPEC.instructions);
    const bareArgs = (sessionId: string, resume: boolean, streamInput: boolean) => {
      const args = buildCliArgs({ sessionId, resume, mcpConfigPath: path.join(runFiles, 'mcp.json'), instructionsPath: path.join(runFiles, 'instructions.md'), model: DEFAULT_MODEL, pinnedTools: [], streamInput });
      args.splice(args.indexOf('--permission-prompt-tool'), 2);
      return args;
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
    const samples = { bare: [] as Sample[], sandboxed: [] as Sample[], unsandboxed: [] as Sample[], node: [] as number[], compare: [] as Sample[] };
    if (COMPARE !== undefined) await ward('auto', COMPARE);
    for (let round = 0; round < ROUNDS; round++) {
      // The order rotates, so no variant always runs right after another.
      const order = [() => bare().then((s) => samples.bare.push(s)), () => ward('auto').then((s) => samples.sandboxed.push(s)), () => ward('off').then((s) => samples.unsandboxed.push(s)), () => nodeStart().then((ms) => samples.node.push(ms))];
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
    try {
      desktop = await followUps(wardEnv, () => provider.push({ blocks: [{ type: 'text', text: 'Hello.' }] }), { resume: bareResume, warm: warmBare }, inProcessTrace);
    } finally {
      delete process.env.WARD_TRACE_FILE;
    }
    const sandboxed = summary(samples.sandboxed, samples.bare);
    const unsandboxed = summary(samples.unsandboxed, samples.bare);
    return {
      rounds: ROUNDS,
      // Issue 29's Done-when pairs, from this one run (each a median of per-round ratios, or ms).
      pairs: {
        warmDesktopTurnToWarmBareCli: { ratio: desktop.ratioMedian, goal: '<= 1.10' },
        wardRunNewSandboxedToBareClaudeP: { ratio: sandboxed.ratioMedian, goal: '<= 1.0 (with the service; none here: in-process path)' },
        wardRunNewSandboxOffToBareClaudeP: { ratio: unsandboxed.ratioMedian, goal: '<= 1.5 (no service)' },
        wardBeforeTheSpawnMs: { sandboxed: sandboxed.wardPreSpawnMedianMs, sandboxOff: unsandboxed.wardPreSpawnMedianMs, warmDesktopTurn: desktop.wardBeforeTheWriteMedianMs, goal: '<= 100 ms (in-process path)' },
      },
      desktopFollowUp: desktop,
      target: 'ward run / bare CLI <= 1.10x (median of pair ratios); Ward before the spawn <= 100 ms',
      nodeStartMedianMs: median(samples.node),
      sandboxed,
      unsandboxed,
      ...(COMPARE === undefined ? {} : { compared: { checkout: COMPARE, ...summary(samples.compare, samples.bare), sandboxedToCompared: round(percentile(samples.sandboxed.map((sample, i) => sample.totalMs / samples.compare[i]!.totalMs), 50), 2) } }),
    };
  } finally {
    await provider.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}
