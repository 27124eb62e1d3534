/**
 * The desktop's warm follow-up turn for bench/turn.ts (issues 19, 29): Ward's warm session against
 * a warm bare CLI and a bare `claude -p --resume`, with Ward's in-process trace marks; and a chat
 * opened again after its CLI ended, with and without the CLI started ahead.
 */
import { WardApp } from '../main/app/ward-app.js';
import { traceMark } from '../main/base/trace.js';
import type { Namespace } from '../main/namespaces/namespace.js';
import fs from 'node:fs';
import { percentile, round } from './stats.js';
import type { WarmBareCli } from './warm-cli.js';

export interface Sample {
  /** Spawn to exit of the whole process. */
  readonly totalMs: number;
  /** Spawn to the first answer text on stdout. */
  readonly firstTokenMs: number;
  /** The bare CLI's spawn to its system/init line (Ward's is in its marks). */
  readonly initMs?: number;
  readonly marks: Record<string, number>;
}

export const ROUNDS = Number(process.env.WARD_BENCH_TURN_ROUNDS ?? 9);
/** How long a person writes a message before Send, after the chat's CLI was asked to start (runs.prepare). */
const WRITING_MS = 1_000;

/** The median, rounded; the sample is left as it was (pairs are read by index after it). */
export function median(values: readonly number[]): number {
  return round(percentile([...values], 50), 1);
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
  ['  of which to the gateway', 'cli-init', 'gateway-request'],
  ['  of which the gateway: request read + credential', 'gateway-request', 'gateway-forward'],
  ['  of which the files indexed (issue 26; the credential waits)', 'spawned', 'changes-indexed'],
  ['  of which the provider: answer head', 'gateway-forward', 'gateway-answer-head'],
  ['  of which the provider: first chunk', 'gateway-answer-head', 'gateway-first-chunk'],
  ['  of which the first chunk relayed to the CLI text on stdout', 'gateway-first-chunk', 'first-token'],
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

export interface Bare {
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
export async function followUps(env: Record<string, string>, push: () => void, bare: Bare, traceFile: string, full: boolean): Promise<Record<string, unknown>> {
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
    if (full) await bare.resume();
    push();
    await warmBare.turn('hi');
    const warm: number[] = [];
    const warmFirstToken: number[] = [];
    const warmMarks: Record<string, number>[] = [];
    const resumed: number[] = [];
    const bareWarm: number[] = [];
    const bareWarmFirstToken: number[] = [];
    const bareWarmInit: number[] = [];
    const pids = new Set<number | undefined>();
    for (let round = 0; round < ROUNDS; round++) {
      const trio = [
        async () => {
          if (full) resumed.push((await bare.resume()).totalMs);
        },
        async () => {
          push();
          const sample = await warmBare.turn('hi');
          bareWarm.push(sample.ms);
          bareWarmFirstToken.push(sample.firstTokenMs);
          bareWarmInit.push(sample.initMs);
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
      // Against the breakdown's "CLI: written to system/init": the same step without Ward around the CLI.
      bareWarmInitMedianMs: median(bareWarmInit),
      // One CLI process served every follow-up: the session stayed warm.
      cliProcesses: pids.size,
      target: 'follow-up / warm bare CLI <= 1.10x',
      pass: ratio <= 1.1 && pids.size === 1,
      ...(full
        ? {
            bareResumeMedianMs: median(resumed),
            resumeRatioMedian: round(percentile(warm.map((ms, i) => ms / resumed[i]!), 50), 2),
            reopenedChat: await reopenedChats(runs, namespace, first.conversationId, [...pids].at(-1), turn, bare.resume),
          }
        : {}),
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

