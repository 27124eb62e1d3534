/**
 * What the OS sandbox costs a turn (S1; no target): a whole `ward run --new` text turn, process
 * start to exit, with the sandbox (WARD_SANDBOX=auto: bubblewrap, the runtime's proxy, the
 * filesystem view) against the same turn with WARD_SANDBOX=off, on the same scripted provider.
 * Runs alternate in pairs so both see the same machine; the figure is the median of the per-pair
 * ratios.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startModelProvider } from '../test/fixtures/model-provider/provider.js';
import { percentile, round } from './stats.js';

const PAIRS = 7;
const WARD = path.resolve(import.meta.dirname, '..', 'bin', 'ward.js');
/** A turn that takes longer than this has failed, not slowed down. */
const TURN_TIMEOUT_MS = 120_000;

/** Milliseconds from spawning `ward run` to its exit; a failed turn fails the benchmark with its stderr. */
function timedTurn(env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(process.execPath, [WARD, 'run', '--new', '--', 'say hello'], { env, stdio: ['ignore', 'ignore', 'pipe'], timeout: TURN_TIMEOUT_MS });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => {
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      if (code === 0) resolve(ms);
      else reject(new Error(`ward run exited ${code}${env.WARD_SANDBOX === 'off' ? ' (WARD_SANDBOX=off)' : ''}: ${stderr.trim().slice(-400)}`));
    });
  });
}

export async function benchSandboxTurn(): Promise<Record<string, unknown>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-bench-sandbox-'));
  const home = path.join(dir, 'home');
  fs.mkdirSync(home);
  fs.writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ credentialStore: 'file' }));
  const provider = await startModelProvider();
  const env = { PATH: process.env.PATH, HOME: dir, TMPDIR: dir, WARD_HOME: home, ANTHROPIC_API_KEY: 'sk-ant-bench', WARD_MODEL_BASE_URL: provider.url };
  const turn = async (sandbox: 'auto' | 'off') => {
    provider.push({ blocks: [{ type: 'text', text: 'hello' }] });
    return timedTurn({ ...env, WARD_SANDBOX: sandbox });
  };
  try {
    // One of each first: the CLI binary and Ward's modules come into the page cache.
    await turn('auto');
    await turn('off');
    const sandboxed: number[] = [];
    const bare: number[] = [];
    const ratios: number[] = [];
    for (let pair = 0; pair < PAIRS; pair++) {
      // Alternating which goes first, so neither always runs on a warmer machine.
      const first = pair % 2 === 0 ? 'auto' : 'off';
      const a = await turn(first);
      const b = await turn(first === 'auto' ? 'off' : 'auto');
      const [withSandbox, without] = first === 'auto' ? [a, b] : [b, a];
      sandboxed.push(withSandbox);
      bare.push(without);
      ratios.push(withSandbox / without);
    }
    return {
      pairs: PAIRS,
      sandboxedTurnMedianMs: round(percentile(sandboxed, 50), 1),
      unsandboxedTurnMedianMs: round(percentile(bare, 50), 1),
      medianRatio: round(percentile(ratios, 50), 3),
      target: 'none (reported)',
    };
  } finally {
    await provider.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
