import type { Readable, Writable } from 'node:stream';

/** What a command may touch of its process; tests pass their own streams. */
export interface CliIo {
  readonly stdout: Writable;
  readonly stderr: Writable;
  readonly stdin: Readable & { isTTY?: boolean };
  readonly env: NodeJS.ProcessEnv;
}

export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env };
}

export function writeLine(stream: Writable, line = ''): void {
  stream.write(`${line}\n`);
}

/** `--json` output: one JSON object per line. */
export function writeJson(stream: Writable, value: unknown): void {
  stream.write(`${JSON.stringify(value)}\n`);
}
