/**
 * The warm bare CLI (issue 29's yardstick for a warm desktop turn): one pinned CLI process started
 * with `--input-format stream-json`, kept between turns; a turn is one user line written to its
 * stdin, timed to the `result` line it answers with. No Ward in the way: no sandbox, broker,
 * gateway or journal.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

/** How long one turn of the warm bare CLI may take before the bench gives up. */
const TURN_TIMEOUT_MS = 60_000;

export interface WarmTurn {
  /** The user line written to the result line read. */
  readonly ms: number;
  /** The user line written to the first text delta. */
  readonly firstTokenMs: number;
  /** The user line written to the turn's system/init line (Ward's breakdown has the same step). */
  readonly initMs: number;
}

export class WarmBareCli {
  private readonly child: ChildProcessWithoutNullStreams;
  private buffered = '';
  private waiting: ((line: string) => void) | undefined;
  private stderr = '';

  constructor(binary: string, args: readonly string[], env: Record<string, string>, cwd: string) {
    this.child = spawn(binary, args, { env, cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout.on('data', (chunk: Buffer) => {
      this.buffered += chunk.toString('utf8');
      for (let end = this.buffered.indexOf('\n'); end !== -1; end = this.buffered.indexOf('\n')) {
        const line = this.buffered.slice(0, end);
        this.buffered = this.buffered.slice(end + 1);
        this.waiting?.(line);
      }
    });
    this.child.stderr.on('data', (chunk: Buffer) => (this.stderr = (this.stderr + chunk.toString('utf8')).slice(-2_000)));
  }

  /** One turn: the prompt as a stream-json user line, timed to the CLI's result. */
  turn(prompt: string): Promise<WarmTurn> {
    return new Promise((resolve, reject) => {
      const start = performance.now();
      let firstToken: number | undefined;
      let init: number | undefined;
      const fail = (why: string) => {
        this.waiting = undefined;
        clearTimeout(timer);
        this.child.off('close', onClose);
        reject(new Error(`the warm bare CLI ${why}: ${this.stderr.slice(-500)}`));
      };
      const onClose = () => fail('exited mid-turn');
      const timer = setTimeout(() => fail(`gave no result within ${TURN_TIMEOUT_MS} ms`), TURN_TIMEOUT_MS);
      this.child.once('close', onClose);
      this.waiting = (line) => {
        if (init === undefined && line.includes('"subtype":"init"')) init = performance.now() - start;
        if (firstToken === undefined && line.includes('"text_delta"')) firstToken = performance.now() - start;
        if (!line.includes('"type":"result"')) return;
        const message = JSON.parse(line) as { type?: string; subtype?: string };
        if (message.type !== 'result') return;
        this.waiting = undefined;
        clearTimeout(timer);
        this.child.off('close', onClose);
        if (message.subtype !== 'success') return reject(new Error(`the warm bare CLI's turn failed: ${line.slice(0, 300)}`));
        resolve({ ms: performance.now() - start, firstTokenMs: firstToken ?? Number.NaN, initMs: init ?? Number.NaN });
      };
      this.child.stdin.write(`${JSON.stringify({ type: 'user', message: { role: 'user', content: prompt } })}\n`);
    });
  }

  /** Ends the CLI (stdin closes; killed if it lingers), bounded. */
  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const closed = new Promise((resolve) => this.child.once('close', resolve));
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    await closed;
    clearTimeout(timer);
  }
}
