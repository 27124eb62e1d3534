import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { percentile, round } from './stats.js';

const RUNS = 15;
const ROOT = path.resolve(import.meta.dirname, '..');

function medianMs(args: string[], env: NodeJS.ProcessEnv): number {
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = process.hrtime.bigint();
    const result = spawnSync(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
    if (result.error) throw result.error;
  }
  return percentile(samples, 50);
}

/** `ward doctor` from process start to exit (its output is complete at exit), against bare `node -e 0`. */
export async function benchColdStart(): Promise<Record<string, unknown>> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-bench-home-'));
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, WARD_HOME: home, DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS };
  try {
    spawnSync(process.execPath, [path.join(ROOT, 'bin', 'ward.js'), 'namespace', 'create', 'work'], { env });
    const baseline = medianMs(['-e', '0'], env);
    const doctor = medianMs([path.join(ROOT, 'bin', 'ward.js'), 'doctor'], env);
    return {
      runs: RUNS,
      wardDoctorMedianMs: round(doctor, 1),
      baselineNodeMedianMs: round(baseline, 1),
      ratioToBaseline: round(doctor / baseline, 2),
      target: '<= 300 ms',
      pass: doctor <= 300,
    };
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}
