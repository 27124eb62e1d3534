/** `ward ARGS` run in this process through the CLI's own entry, with its output captured. */
import { PassThrough } from 'node:stream';
import { main } from '../../main/cli/main.js';

export interface InProcessResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export async function wardInProcess(args: readonly string[], env: NodeJS.ProcessEnv): Promise<InProcessResult> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const code = await main(args, { stdout, stderr, stdin: new PassThrough(), env });
  return { code, stdout: out, stderr: err };
}
