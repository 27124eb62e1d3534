/**
 * File changes (issue 26) on a 10,000-file, 200 MB workspace:
 * - the first snapshot (every file read, hashed and stored as a blob);
 * - a re-scan of the unchanged tree (the lstat walk a turn runs, listed by the scan workers and compared against the
 *   index) against `git status --porcelain` on the same tree, committed, in the same run (git's time includes its spawn):
 *   in the process that made the index (the desktop: folders listed the same are taken whole), and against the index
 *   as read from its file (a new `ward run` process: every entry compared);
 * - a whole in-process Ward turn (real pinned CLI, scripted provider, one Bash call changing three
 *   files) tracked, against the same turn with tracking cut short at its first file, alternating, each
 *   in a tree of its own (identical): as for a person, nothing but the agent changes a tree between its turns.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WardApp } from '../main/app/ward-app.js';
import { ChangeStore, diffAfter, scanAfter, snapshotBefore, type TrackingLimits } from '../main/changes/tracker.js';
import { DEFAULT_SCAN_LIMITS, scanRootSliced } from '../main/changes/scan.js';
import { parseNamespace } from '../main/namespaces/namespace.js';
import { parsePermissionFlags } from '../main/permissions/grants.js';
import { startModelProvider } from '../test/fixtures/model-provider/provider.js';
import { percentile, round, timeMs } from './stats.js';

const FILES = 10_000;
const FILE_BYTES = 20 * 1024;
const RESCANS = 41;
const TURNS = Number(process.env.WARD_BENCH_CHANGES_TURNS ?? 5);
const BUDGET_MS = 300_000;
const PAUSE_BETWEEN_TURNS_MS = 100;

function makeTree(root: string): void {
  for (let index = 0; index < FILES; index += 1) {
    const dir = path.join(root, `d${index % 100}`);
    if (index < 100) fs.mkdirSync(dir, { recursive: true });
    const bytes = Buffer.alloc(FILE_BYTES, index % 251);
    bytes.write(`file ${index}\n`);
    fs.writeFileSync(path.join(dir, `f${index}.txt`), bytes);
  }
}

function git(root: string, ...args: string[]): void {
  const done = spawnSync('git', ['-c', 'user.email=bench@ward', '-c', 'user.name=bench', ...args], { cwd: root, stdio: 'ignore' });
  if (done.status !== 0) throw new Error(`git ${args.join(' ')} failed`);
}

async function scans(root: string, home: string): Promise<Record<string, unknown>> {
  const store = new ChangeStore(path.join(home, 'changes'));
  // A loaded machine must not turn the measurement into an untracked run.
  const limits = { ...DEFAULT_SCAN_LIMITS, budgetMs: BUDGET_MS };
  const started = performance.now();
  const snapshot = await snapshotBefore(store, 'bench', [root], [], limits);
  const first = performance.now() - started;
  const index = snapshot.roots.get(root)!;
  const options = { blobs: store.blobs, limits: { ...limits, deadline: Number.MAX_SAFE_INTEGER }, denyRead: [] };
  const ward: number[] = [];
  const fromDisk: number[] = [];
  const gitStatus: number[] = [];
  for (let round = 0; round < RESCANS; round += 1) {
    const started = performance.now();
    await scanRootSliced(root, index, options);
    ward.push(performance.now() - started);
    // As a new process scans (`ward run`): against the index read from its file, with no listing of this process's to take a folder whole.
    const read = JSON.parse(JSON.stringify(index)) as typeof index;
    const startedFromDisk = performance.now();
    await scanRootSliced(root, read, options);
    fromDisk.push(performance.now() - startedFromDisk);
    gitStatus.push(timeMs(() => spawnSync('git', ['status', '--porcelain'], { cwd: root, stdio: 'ignore' })));
  }
  const rescan = percentile(ward, 50);
  const rescanFromDisk = percentile(fromDisk, 50);
  const gitMs = percentile(gitStatus, 50);
  const watched = percentile(await watchedRescans(store, root, limits), 50);
  return {
    firstSnapshotMs: round(first, 1),
    firstSnapshotTarget: '≤ 2000 ms',
    rescanP50Ms: round(rescan, 2),
    gitStatusP50Ms: round(gitMs, 2),
    rescanVsGit: round(rescan / gitMs, 3),
    rescanTarget: '≤ 1.2',
    rescanFromDiskP50Ms: round(rescanFromDisk, 2),
    rescanFromDiskVsGit: round(rescanFromDisk / gitMs, 3),
    rescanWatchedP50Ms: round(watched, 2),
    rescanWatchedVsGit: round(watched / gitMs, 3),
  };
}

/** What a turn's scans cost once a watch records the tree (a conversation's second turn on in one process): the folders it heard of. */
async function watchedRescans(store: ChangeStore, root: string, limits: TrackingLimits): Promise<number[]> {
  let before = await snapshotBefore(store, 'bench-watched', [root], [], limits);
  const times: number[] = [];
  try {
    for (let round = 0; round < RESCANS; round += 1) {
      const started = performance.now();
      const scanned = await scanAfter(store, before, limits);
      times.push(performance.now() - started);
      before = diffAfter(store, before, scanned).snapshot;
    }
  } finally {
    before.watch?.close();
  }
  return times;
}

async function turns(roots: { readonly tracked: string; readonly untracked: string }): Promise<Record<string, unknown>> {
  const provider = await startModelProvider([]);
  const make = (limits: { maxFiles?: number; budgetMs: number }) => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-bench-changes-home-'));
    return new WardApp({ home, env: { PATH: process.env.PATH, HOME: home, LANG: 'C.UTF-8', ANTHROPIC_API_KEY: 'sk-ant-bench-0000', WARD_MODEL_BASE_URL: provider.url }, policy: null, run: { changeLimits: limits } });
  };
  // Cut short at its first file, tracking costs next to nothing: the turn without it.
  const apps = { tracked: make({ budgetMs: BUDGET_MS }), untracked: make({ maxFiles: 0, budgetMs: BUDGET_MS }) };
  const samples: Record<keyof typeof apps, number[]> = { tracked: [], untracked: [] };
  // Each app's turns continue one conversation, as a person's do: its index makes later scans stat-only.
  const conversations: Partial<Record<keyof typeof apps, string>> = {};
  try {
    for (let round = 0; round <= TURNS; round += 1) {
      for (const which of ['tracked', 'untracked'] as const) {
        const root = roots[which];
        const permissions = parsePermissionFlags([`--allow-write=${root}`, '--allow-run=sed'], root);
        // A person's next turn comes seconds after the last; back to back, the sandbox's kept deny scan of the workspace
        // is refused (its root changed within the clock's step: the last turn's stand-ins went away) and ripgrep runs again.
        await new Promise((resolve) => setTimeout(resolve, PAUSE_BETWEEN_TURNS_MS));
        // A simple command (a shell's `>` or `;` would be asked about, and denied here): three files' first lines.
        const files = [1, 2, 3].map((index) => `${root}/d${index}/f${index}.txt`);
        const command = `sed -i 1c${which}-${round} ${files.join(' ')}`;
        provider.push({ blocks: [{ type: 'tool_use', name: 'Bash', input: { command, description: 'change three' } }] }, { blocks: [{ type: 'text', text: 'done' }] });
        const started = performance.now();
        const conversationId = conversations[which];
        const handle = (await apps[which].runs()).startTurn({ namespace: parseNamespace('default'), prompt: 'change three files', permissions, ...(conversationId === undefined ? { workspace: root } : { conversationId }) });
        conversations[which] = handle.conversationId;
        const outcome = await handle.done;
        if (outcome.state !== 'succeeded') throw new Error(`bench turn ${outcome.state}: ${outcome.reason}`);
        if (!files.every((file) => fs.readFileSync(file, 'utf8').startsWith(`${which}-${round}\n`))) throw new Error('a bench turn did not change its three files');
        // The first round warms both apps up.
        if (round > 0) samples[which].push(performance.now() - started);
      }
    }
  } finally {
    await apps.tracked.close();
    await apps.untracked.close();
    await provider.close();
  }
  const tracked = percentile(samples.tracked, 50);
  const untracked = percentile(samples.untracked, 50);
  return { turnTrackedP50Ms: round(tracked, 1), turnUntrackedP50Ms: round(untracked, 1), turnRatio: round(tracked / untracked, 3), turnTarget: '≤ 1.05' };
}

export async function benchChanges(): Promise<Record<string, unknown>> {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-bench-changes-'));
  const root = path.join(base, 'tree');
  const untracked = path.join(base, 'untracked-tree');
  try {
    for (const tree of [root, untracked]) {
      makeTree(tree);
      git(tree, 'init', '-q');
      git(tree, 'add', '-A');
      git(tree, 'commit', '-q', '-m', 'tree');
    }
    const scan = await scans(root, base);
    const turn = await turns({ tracked: root, untracked });
    return { files: FILES, bytes: FILES * FILE_BYTES, ...scan, ...turn, pass: (scan.rescanVsGit as number) <= 1.2 && (scan.firstSnapshotMs as number) <= 2000 && (turn.turnRatio as number) <= 1.05 };
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
}
