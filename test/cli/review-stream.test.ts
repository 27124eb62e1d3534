/**
 * E4 at scale: `ward review` of a large bundle streams, and `ward review big | head` stops reading
 * the bundle once its reader has gone (what is measured is the bytes the process read, not time).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { journalEvent } from '../../common/events.js';
import { makeBundle } from '../export/support.js';
import { tempDir } from '../support/temp.js';
import { WARD_BIN } from '../support/ward-cli.js';

const EVENTS = 20_000;

/** `ward review FILE`, with a preload that reports the bytes the process read (/proc/self/io rchar) as it exits; `onStdout` may close the pipe. */
function review(file: string, onStdout: (chunk: Buffer, stdout: Readable) => void): Promise<{ code: number | null; stderr: string; bytesRead: number }> {
  const dir = tempDir();
  const preload = path.join(dir, 'read-bytes.cjs');
  fs.writeFileSync(preload, "process.on('exit', () => { const fs = require('node:fs'); fs.writeSync(3, /rchar: (\\d+)/.exec(fs.readFileSync('/proc/self/io', 'utf8'))[1]); });\n");
  const child = spawn(process.execPath, ['--require', preload, WARD_BIN, 'review', file], { env: { PATH: process.env.PATH, WARD_HOME: path.join(dir, 'never-made') }, stdio: ['ignore', 'pipe', 'pipe', 'pipe'] });
  let stderr = '';
  let reported = '';
  child.stdout!.on('data', (chunk: Buffer) => onStdout(chunk, child.stdout!));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  child.stdio[3]!.on('data', (chunk: Buffer) => (reported += chunk.toString('utf8')));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('ward review did not finish within 120 s'));
    }, 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, bytesRead: Number(reported) });
    });
  });
}

describe('ward review of a large bundle', () => {
  it('test_ward_review_piped_into_a_reader_that_closes_early_stops_reading_the_bundle_without_a_verdict', async () => {
    const { file } = makeBundle(1, {
      after: (store, conversationId) => {
        for (let start = 0; start < EVENTS; start += 1_000) {
          store.journal.appendMany(conversationId, Array.from({ length: 1_000 }, (_, k) => journalEvent('assistant_text', { text: `an answer of moderate length, number ${start + k}` })));
        }
      },
    });
    const size = fs.statSync(file).size;
    // Read whole, the process reads at least the bundle: the measure sees it.
    const whole = await review(file, () => undefined);
    expect(whole.code, whole.stderr).toBe(0);
    expect(whole.bytesRead).toBeGreaterThan(size);

    // `ward review big | head -1`: the reader takes the first chunk and goes away.
    let shown = '';
    const cut = await review(file, (chunk, stdout) => {
      shown += chunk.toString('utf8');
      stdout.destroy();
    });
    expect(shown.split('\n')[0]).toBe('Read-only review · NOT YET VERIFIED · the verdict follows the last event');
    expect(cut.bytesRead).toBeGreaterThan(0);
    expect(cut.bytesRead).toBeLessThan(size / 2);
    // Stopped before its verdict: not a success (130, as a stopped run), and no EPIPE trace for a reader that is gone.
    expect(cut.code).toBe(130);
    expect(cut.stderr).toBe('');
  });
});
