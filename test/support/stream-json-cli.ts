/**
 * The pinned CLI started with Ward's flags, reading its turns as stream-json lines from stdin,
 * with a reader that waits for the next line matching a predicate. For the tests that record
 * facts about the pinned binary's stdin/stdout protocol.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { buildCliArgs } from '../../main/runner/argv.js';
import { buildChildEnv } from '../../main/runner/env.js';
import { locatePlatformBinary } from '../../main/runner/pin.js';
import type { ModelProvider } from '../fixtures/model-provider/provider.js';
import { tempDir } from './temp.js';

export type Line = Record<string, unknown>;

export interface StreamJsonCli {
  readonly child: ChildProcessWithoutNullStreams;
  readonly lines: Line[];
  readonly workspace: string;
  /** The next line from here on that matches, within `timeoutMs`. */
  next(predicate: (line: Line) => boolean, timeoutMs?: number): Promise<Line>;
  send(message: Line): void;
}

export interface StreamJsonCliOptions {
  /** The mcp.json's servers (none by default). */
  readonly mcpServers?: Record<string, unknown>;
  /** `--permission-prompt-tool`'s value; null drops the flag (default). */
  readonly permissionPromptTool?: string | null;
  readonly nativeTools?: readonly string[];
  readonly askTools?: readonly string[];
}

export function startStreamJsonCli(provider: ModelProvider, options: StreamJsonCliOptions = {}): StreamJsonCli {
  const dir = tempDir('ward-stream-input-');
  const workspace = path.join(dir, 'workspace');
  fs.mkdirSync(workspace);
  fs.writeFileSync(path.join(dir, 'mcp.json'), JSON.stringify({ mcpServers: options.mcpServers ?? {} }));
  fs.writeFileSync(path.join(dir, 'instructions.md'), 'Answer briefly.');
  const configDir = path.join(dir, 'config');
  fs.mkdirSync(configDir, { mode: 0o700 });
  const args = buildCliArgs({
    sessionId: randomUUID(),
    resume: false,
    mcpConfigPath: path.join(dir, 'mcp.json'),
    instructionsPath: path.join(dir, 'instructions.md'),
    model: 'claude-test',
    pinnedTools: [],
    nativeTools: options.nativeTools ?? [],
    askTools: options.askTools ?? [],
  });
  const prompt = args.indexOf('--permission-prompt-tool');
  if (options.permissionPromptTool == null) args.splice(prompt, 2);
  else args[prompt + 1] = options.permissionPromptTool;
  const env = buildChildEnv({ inherited: { PATH: process.env.PATH, HOME: dir, LANG: 'C.UTF-8' }, model: { baseUrl: provider.url, capability: 'sk-ant-stream-input-test', mode: 'api-key' }, configDir });
  const child = spawn(locatePlatformBinary().binary, args, { env, cwd: workspace, stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: Line[] = [];
  const waiters = new Set<() => void>();
  let buffered = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
      const text = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      if (text.startsWith('{')) lines.push(JSON.parse(text) as Line);
    }
    for (const wake of waiters) wake();
  });
  let seen = 0;
  const next = (predicate: (line: Line) => boolean, timeoutMs = 30_000): Promise<Line> =>
    new Promise((resolve, reject) => {
      const look = () => {
        while (seen < lines.length) {
          const line = lines[seen++]!;
          if (predicate(line)) {
            waiters.delete(look);
            clearTimeout(timer);
            return resolve(line);
          }
        }
      };
      const timer = setTimeout(() => {
        waiters.delete(look);
        reject(new Error(`no matching line within ${timeoutMs} ms; last lines: ${JSON.stringify(lines.slice(-3)).slice(0, 800)}`));
      }, timeoutMs);
      waiters.add(look);
      look();
    });
  return { child, lines, workspace, next, send: (message) => child.stdin.write(`${JSON.stringify(message)}\n`) };
}

export const userLine = (text: string): Line => ({ type: 'user', message: { role: 'user', content: text } });
export const isResult = (line: Line): boolean => line.type === 'result';
export const responseTo =
  (id: string) =>
  (line: Line): boolean =>
    line.type === 'control_response' && (line.response as { request_id?: string } | undefined)?.request_id === id;
