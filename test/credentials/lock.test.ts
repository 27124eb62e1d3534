import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { withLock } from '../../main/credentials/lock.js';
import { holdInChild, type LockHolder } from '../support/lock-holder.js';
import { tempDir } from '../support/temp.js';
import { until } from '../support/wait.js';

/** A record older than any hold can last: stale although its pid (ours) is alive. */
function staleRecord(): string {
  return JSON.stringify({ pid: process.pid, host: os.hostname(), nonce: 'stale', since: new Date(Date.now() - 11 * 60_000).toISOString() });
}

/** Whether process `pid` has the file `target` open (Linux /proc). */
function hasOpen(pid: number, target: fs.Stats): boolean {
  const fds = `/proc/${pid}/fd`;
  return fs.readdirSync(fds).some((fd) => {
    try {
      const open = fs.statSync(path.join(fds, fd));
      return open.ino === target.ino && open.dev === target.dev;
    } catch {
      return false;
    }
  });
}

describe('cross-process lock', () => {
  it('test_makes_another_process_wait_a_bounded_time_then_fails_with_lock_timeout_naming_the_holder', async () => {
    const file = path.join(tempDir(), 'locks', 'a.lock');
    const holder = holdInChild(file);
    expect(await holder.said).toBe('held');
    await expect(withLock(file, async () => 'never', { timeoutMs: 300 })).rejects.toMatchObject({
      code: 'lock_timeout',
      message: expect.stringContaining(`held by pid ${holder.child.pid}`),
    });
    await holder.release();
    expect(await withLock(file, async () => 'mine', { timeoutMs: 2_000 })).toBe('mine');
    expect(fs.existsSync(file)).toBe(false);
  });

  it('test_breaks_the_lock_of_a_process_that_died_holding_it', async () => {
    const file = path.join(tempDir(), 'locks', 'b.lock');
    const holder = holdInChild(file);
    expect(await holder.said).toBe('held');
    holder.child.kill('SIGKILL');
    await holder.exited;
    expect(fs.existsSync(file)).toBe(true);
    expect(await withLock(file, async () => 'recovered', { timeoutMs: 2_000 })).toBe('recovered');
  });

  it('test_breaks_a_lock_record_older_than_any_hold_can_last_even_if_its_pid_is_alive_reused_pid', async () => {
    const file = path.join(tempDir(), 'd.lock');
    fs.writeFileSync(file, staleRecord());
    expect(await withLock(file, async () => 'taken', { timeoutMs: 1_000 })).toBe('taken');
    expect(fs.readdirSync(path.dirname(file))).toEqual([]);
  });

  // The stale lock is a FIFO, so each read of it by the breaking process blocks until the test
  // writes: the test replaces the lock with a fresh holder's exactly between that read and what
  // the breaker does next.
  it.each(['first', 'second'])('test_leaves_a_fresh_lock_that_replaced_a_stale_one_while_another_process_was_breaking_it_to_its_holder_replaced_during_the_%s_read', async (during) => {
    const dir = tempDir();
    const file = path.join(dir, 'e.lock');
    execFileSync('mkfifo', ['-m', '600', file]);
    // A second name for the FIFO that stays put whatever the breaker renames.
    const pipe = path.join(dir, 'pipe');
    fs.linkSync(file, pipe);
    const fifo = fs.statSync(pipe);
    const stale = staleRecord();
    const breaker = holdInChild(file, 1_500);
    let fresh: LockHolder | undefined;
    /** Answers the breaker's next read with the stale record, replacing the lock first if asked. */
    const answerRead = async (replace: boolean) => {
      const writer = await fs.promises.open(pipe, fs.constants.O_WRONLY); // returns once the breaker opens it to read
      await until(() => hasOpen(breaker.child.pid!, fifo), 'the breaker to open the lock');
      if (replace) {
        fs.rmSync(file, { force: true });
        fresh = holdInChild(file);
        expect(await fresh.said).toBe('held');
      }
      await writer.write(stale);
      await writer.close();
    };
    try {
      await answerRead(during === 'first');
      if (during === 'second') {
        await until(() => !hasOpen(breaker.child.pid!, fifo), 'the breaker to finish its first read');
        await answerRead(true);
      }
      expect(await breaker.said).toBe('failed lock_timeout');
      expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toMatchObject({ pid: fresh!.child.pid });
    } finally {
      await Promise.all([breaker.release(), fresh?.release()]);
    }
  });

  it('test_serializes_callers_in_one_process_and_lets_a_holder_re_enter_its_own_lock', async () => {
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

  it('test_does_not_let_work_started_inside_a_hold_re_enter_the_lock_after_the_hold_ended', async () => {
    const file = path.join(tempDir(), 'f.lock');
    let resume!: () => void;
    let late!: Promise<string>;
    await withLock(file, async () => {
      late = new Promise<void>((resolve) => (resume = resolve)).then(() => withLock(file, async () => 'ran while another process held the lock', { timeoutMs: 300 }));
    });
    const other = holdInChild(file);
    try {
      expect(await other.said).toBe('held');
      resume();
      await expect(late).rejects.toMatchObject({ code: 'lock_timeout' });
    } finally {
      await other.release();
    }
  });

  it('test_keeps_the_lock_until_re_entrant_work_started_inside_the_hold_has_finished', async () => {
    const file = path.join(tempDir(), 'g.lock');
    let nestedDone = false;
    await withLock(file, async () => {
      void withLock(file, async () => {
        await sleep(100);
        nestedDone = true;
      });
    });
    expect(nestedDone).toBe(true);
    expect(fs.existsSync(file)).toBe(false);
  });
});
