/**
 * R2/R6: the pinned CLI as a child process. argv array, no shell, its own process group, stdio
 * pipes. It reads stream-json lines on stdin (`--input-format stream-json`, issue 19): one `user`
 * line per turn, and the answers to its permission questions (`can_use_tool` control requests,
 * `--permission-prompt-tool stdio`); a one-turn child's stdin closes after its result, and it
 * exits. Stop is the `interrupt` control request (facts in test/runner/stream-json-input.test.ts
 * and control-channel.test.ts); the whole group gets SIGKILL when the grace period runs out.
 * Sandboxed (main/sandbox/engine.ts), the child is the runtime's wrapper around bwrap, and the
 * group kill takes the wrapper and bwrap, whose --die-with-parent and pid namespaces take the rest.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { StreamJsonParser, type CliMessage } from './stream-parser.js';

/** The answer to a permission question, as the CLI reads it. */
export type PermissionAnswer = { readonly behavior: 'allow'; readonly updatedInput: Record<string, unknown> } | { readonly behavior: 'deny'; readonly message: string };

export interface CliLaunch {
  readonly binary: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
  readonly maxLineBytes?: number;
}

export interface CliExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Set when the process could not be started at all. */
  readonly spawnError: string | null;
  /** The last few KiB of stderr, for the failure reason. */
  readonly stderrTail: string;
}

const STDERR_TAIL_BYTES = 8 * 1024;
/** After `exit`, how long stdout may take to flush before Ward stops waiting for it. */
const CLOSE_AFTER_EXIT_MS = 2_000;

export class CliProcess {
  readonly exited: Promise<CliExit>;
  private readonly child: ChildProcess;
  private interrupts = 0;

  /** `onMessages` gets the messages of one stdout chunk together, so they can be committed in one transaction. */
  constructor(launch: CliLaunch, onMessages: (messages: CliMessage[]) => void) {
    this.child = spawn(launch.binary, [...launch.args], {
      cwd: launch.cwd,
      env: { ...launch.env },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
      windowsHide: true,
    });
    let batch: CliMessage[] = [];
    const parser = new StreamJsonParser((message) => batch.push(message), launch.maxLineBytes);
    const flush = () => {
      if (batch.length === 0) return;
      const messages = batch;
      batch = [];
      onMessages(messages);
    };
    let stderrTail = '';
    this.child.stdout!.on('data', (chunk: Buffer) => {
      parser.push(chunk);
      flush();
    });
    this.child.stderr!.on('data', (chunk: Buffer) => {
      stderrTail = (stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL_BYTES);
    });
    // EPIPE when the child dies before reading the prompt is reported through `exited`.
    this.child.stdin!.on('error', () => undefined);
    this.exited = new Promise<CliExit>((resolve) => {
      let spawnError: string | null = null;
      let exitInfo: { code: number | null; signal: NodeJS.Signals | null } | null = null;
      let settled = false;
      const settle = () => {
        if (settled) return;
        settled = true;
        parser.end();
        flush();
        resolve({ code: exitInfo?.code ?? null, signal: exitInfo?.signal ?? null, spawnError, stderrTail: stderrTail.trim() });
      };
      this.child.on('error', (error) => {
        spawnError = error.message;
        if (this.child.pid === undefined) settle();
      });
      this.child.on('exit', (code, signal) => {
        exitInfo = { code, signal };
        // stdout normally closes right after; a grandchild holding it open must not stall us.
        setTimeout(() => {
          this.child.stdout?.destroy();
          this.child.stderr?.destroy();
          settle();
        }, CLOSE_AFTER_EXIT_MS).unref();
      });
      this.child.on('close', (code, signal) => {
        exitInfo ??= { code, signal };
        settle();
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Still running (spawned, not exited). */
  get alive(): boolean {
    return this.child.pid !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** A turn: one stream-json `user` line (no shell, no argv: the text stays out of `ps`). */
  sendTurn(prompt: string): void {
    this.writeLine({ type: 'user', message: { role: 'user', content: prompt } });
  }

  /** The answer to the CLI's permission question `requestId`. */
  answerPermission(requestId: string, answer: PermissionAnswer): void {
    this.writeLine({ type: 'control_response', response: { subtype: 'success', request_id: requestId, response: answer } });
  }

  /** No more turns: stdin closes and the CLI exits 0 once its turn is done. */
  endInput(): void {
    this.child.stdin!.end();
  }

  /** Graceful stop: the CLI cancels the turn and writes its terminal result. */
  interrupt(): void {
    if (this.alive) this.writeLine({ type: 'control_request', request_id: `ward-interrupt-${++this.interrupts}`, request: { subtype: 'interrupt' } });
  }

  private writeLine(message: Record<string, unknown>): void {
    if (this.alive && this.child.stdin!.writable) this.child.stdin!.write(`${JSON.stringify(message)}\n`);
  }

  /** Kills the CLI and everything it started (its process group). Safe to call repeatedly. */
  killGroup(): void {
    const pid = this.child.pid;
    if (pid === undefined) return;
    try {
      process.kill(process.platform === 'win32' ? pid : -pid, 'SIGKILL');
    } catch {
      // ESRCH: the group is already gone
    }
  }
}
