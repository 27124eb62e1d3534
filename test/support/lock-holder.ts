/** A Ward lock held by another process (test/credentials/lock-holder.ts), for cross-process lock tests. */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { REPO_ROOT } from './ward-cli.js';

export interface LockHolder {
  readonly child: ChildProcessByStdio<Writable, Readable, null>;
  /** Its first line: "held", or "failed <code>" when it could not take the lock in time. */
  readonly said: Promise<string>;
  readonly exited: Promise<void>;
  /** Closes its stdin, so it releases the lock and exits. */
  release(): Promise<void>;
}

export function holdInChild(file: string, timeoutMs?: number): LockHolder {
  const args = [path.join(REPO_ROOT, 'test', 'credentials', 'lock-holder.ts'), file, ...(timeoutMs === undefined ? [] : [String(timeoutMs)])];
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const said = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the lock holder said nothing within 30 s')), 30_000);
    let text = '';
    child.stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (text.includes('\n')) {
        clearTimeout(timer);
        resolve(text.slice(0, text.indexOf('\n')));
      }
    });
  });
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  return {
    child,
    said,
    exited,
    release: () => {
      child.stdin.end();
      return exited;
    },
  };
}
