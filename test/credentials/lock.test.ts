import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { withLock } from '../../main/credentials/lock.js';
import { REPO_ROOT } from '../support/ward-cli.js';
import { tempDir } from '../support/temp.js';

function holdInChild(file: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'test', 'credentials', 'lock-holder.ts'), file], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const held = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the child never took the lock')), 30_000);
    child.stdout.on('data', () => (clearTimeout(timer), resolve()));
  });
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  return { child, held, exited };
}

describe('cross-process lock', () => {
  it('makes another process wait a bounded time, then fails with lock_timeout naming the holder', async () => {
    const file = path.join(tempDir(), 'locks', 'a.lock');
    const holder = holdInChild(file);
    await holder.held;
    await expect(withLock(file, async () => 'never', { timeoutMs: 300 })).rejects.toMatchObject({
      code: 'lock_timeout',
      message: expect.stringContaining(`held by pid ${holder.child.pid}`),
    });
    holder.child.stdin.end();
    await holder.exited;
    expect(await withLock(file, async () => 'mine', { timeoutMs: 2_000 })).toBe('mine');
    expect(fs.existsSync(file)).toBe(false);
  });

  it('breaks the lock of a process that died holding it', async () => {
    const file = path.join(tempDir(), 'locks', 'b.lock');
    const holder = holdInChild(file);
    await holder.held;
    holder.child.kill('SIGKILL');
    await holder.exited;
    expect(fs.existsSync(file)).toBe(true);
    expect(await withLock(file, async () => 'recovered', { timeoutMs: 2_000 })).toBe('recovered');
  });

  it('breaks a lock record older than any hold can last, even if its pid is alive (reused pid)', async () => {
    const file = path.join(tempDir(), 'd.lock');
    const since = new Date(Date.now() - 11 * 60_000).toISOString();
    fs.writeFileSync(file, JSON.stringify({ pid: process.ppid, host: os.hostname(), nonce: 'x', since }));
    expect(await withLock(file, async () => 'taken', { timeoutMs: 1_000 })).toBe('taken');
  });

  it('serializes callers in one process and lets a holder re-enter its own lock', async () => {
    const file = path.join(tempDir(), 'c.lock');
    let inside = 0;
    let overlap = false;
    const body = async () => {
      inside += 1;
      if (inside > 1) overlap = true;
      await sleep(20);
      inside -= 1;
    };
    await Promise.all([withLock(file, body), withLock(file, body), withLock(file, body)]);
    expect(overlap).toBe(false);
    expect(await withLock(file, () => withLock(file, async () => 'nested'))).toBe('nested');
  });
});
