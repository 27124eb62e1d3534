import fs from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import { escapeInvisibleInJson } from '../../common/display.js';
import { WardError } from '../base/errors.js';
import type { TurnPrompter } from '../app/terminal-questions.js';
import { TerminalGuard } from './terminal-guard.js';

/** What a command may touch of its process; tests pass their own streams. */
export interface CliIo {
  readonly stdout: Writable;
  readonly stderr: Writable;
  readonly stdin: Readable & { isTTY?: boolean };
  readonly env: NodeJS.ProcessEnv;
  /**
   * Set when the command runs for a `ward` elsewhere (the background service runs a client's
   * `ward run`): its folder, its signals and its terminal's questions. Absent: this process's.
   */
  readonly origin?: CommandOrigin;
}

/** The `ward` process a command runs for, when that is not this one. */
export interface CommandOrigin {
  /** What relative paths in its arguments are relative to. */
  readonly cwd: string;
  /** Its Ctrl-C, closed terminal and TERM, forwarded. */
  readonly signals: Pick<NodeJS.EventEmitter, 'on' | 'off'>;
  /** Who answers its turn's questions: the person at its terminal, if it has one. */
  readonly prompter: TurnPrompter;
}

/**
 * A reader that goes away (`ward replay ID | head`) is not our failure: later output is
 * dropped and the command finishes normally (`ward run` also stops its turn, see run.ts).
 */
export function ignoreClosedReader(error: NodeJS.ErrnoException): void {
  if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') throw error;
}

/** The process's own streams, behind the terminal guard: nothing written can act on the terminal. */
export function processIo(): CliIo {
  const stdout = new TerminalGuard(process.stdout).on('error', ignoreClosedReader);
  const stderr = new TerminalGuard(process.stderr).on('error', ignoreClosedReader);
  return { stdout, stderr, stdin: process.stdin, env: process.env };
}

export function writeLine(stream: Writable, line = ''): void {
  stream.write(`${line}\n`);
}

/** `--json` output: one JSON object per line, invisible characters as `\\uXXXX` escapes (still valid JSON). */
export function writeJson(stream: Writable, value: unknown): void {
  stream.write(`${escapeInvisibleInJson(JSON.stringify(value))}\n`);
}

export interface StdinLimits {
  /** What is being read, for messages: "the prompt", "the key", "the secret values". */
  readonly what: string;
  readonly maxBytes: number;
  readonly timeoutMs: number;
}

/** Reads all of a piped stdin, bounded in size and time; every failure is a usage error naming `what`. */
export function readBoundedStdin(stream: Readable, limits: StdinLimits): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (error?: WardError): void => {
      clearTimeout(timer);
      stream.off('data', onData).off('end', onEnd).off('error', onError);
      stream.pause();
      if (error !== undefined) reject(error);
      else resolve(Buffer.concat(chunks).toString('utf8'));
    };
    const timer = setTimeout(() => finish(new WardError('usage', `${limits.what} did not arrive on stdin in time`)), limits.timeoutMs);
    const onData = (chunk: Buffer | string): void => {
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      size += buffer.length;
      if (size > limits.maxBytes) return finish(new WardError('usage', `${limits.what} on stdin exceeds ${limits.maxBytes} bytes`));
      chunks.push(buffer);
    };
    const onEnd = (): void => finish();
    const onError = (error: Error): void => finish(new WardError('usage', `could not read stdin: ${error.message}`));
    stream.on('data', onData).on('end', onEnd).on('error', onError);
    stream.resume();
  });
}

/** A file a person names (instructions, a key file): a regular file within the size bound, read whole. Never a device or a pipe that could hang. */
export function readBoundedFile(file: string, options: { what: string; maxBytes: number }): string {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch (error) {
    throw new WardError('usage', `cannot read ${options.what} ${file}: ${(error as Error).message}`);
  }
  if (!stat.isFile()) throw new WardError('usage', `${options.what} ${file} is not a regular file`);
  if (stat.size > options.maxBytes) throw new WardError('usage', `${options.what} ${file} is larger than ${options.maxBytes} bytes`);
  const fd = fs.openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(options.maxBytes + 1);
    const read = fs.readSync(fd, buffer, 0, buffer.length, 0);
    if (read > options.maxBytes) throw new WardError('usage', `${options.what} ${file} is larger than ${options.maxBytes} bytes`);
    return buffer.subarray(0, read).toString('utf8');
  } finally {
    fs.closeSync(fd);
  }
}
