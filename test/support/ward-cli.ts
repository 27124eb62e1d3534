import { spawn } from 'node:child_process';
import path from 'node:path';

export const REPO_ROOT = path.resolve(import.meta.dirname, '..', '..');
export const WARD_BIN = path.join(REPO_ROOT, 'bin', 'ward.js');

export interface WardResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface WardOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly input?: string;
  readonly timeoutMs?: number;
  readonly cwd?: string;
  /** A command `ward` runs under (e.g. one that mounts an admin policy at /etc/ward: test/support/system-policy.ts). */
  readonly under?: readonly string[];
}

/** Runs the built `ward` command as a user would, in its own process, with a bounded wait. */
export function ward(args: readonly string[], options: WardOptions = {}): Promise<WardResult> {
  return new Promise((resolve, reject) => {
    const [command, ...prefix] = [...(options.under ?? []), process.execPath, WARD_BIN, ...args];
    const child = spawn(command!, prefix, {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...options.env },
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`ward ${args.join(' ')} did not finish within ${options.timeoutMs ?? 30_000} ms`));
    }, options.timeoutMs ?? 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}
