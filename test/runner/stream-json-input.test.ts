/**
 * Facts about the pinned CLI (2.1.328) read from stdin as stream-json, verified against the real
 * binary: what a warm session per conversation (issue 19) would build on. One process answers an
 * `initialize` control request, takes one `user` message per turn and ends each with a `result`
 * line, keeps the conversation's context between turns, answers an `interrupt` control request
 * by ending the turn (`error_during_execution`) while staying alive, and exits 0 when its stdin
 * closes. Ward does not use this mode yet; if a CLI upgrade changes any of it, this test says so.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildCliArgs } from '../../main/runner/argv.js';
import { buildChildEnv } from '../../main/runner/env.js';
import { locatePlatformBinary } from '../../main/runner/pin.js';
import { startModelProvider, type ModelProvider } from '../fixtures/model-provider/provider.js';
import { tempDir } from '../support/temp.js';
import { until } from '../support/wait.js';

type Line = Record<string, unknown>;

const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** The pinned CLI with Ward's flags for a new session, reading stream-json from stdin (no MCP server, no approval tool). */
function startCli(provider: ModelProvider): { child: ChildProcessWithoutNullStreams; lines: Line[]; next(predicate: (line: Line) => boolean, timeoutMs?: number): Promise<Line>; send(message: Line): void } {
  const dir = tempDir('ward-stream-input-');
  fs.writeFileSync(path.join(dir, 'mcp.json'), JSON.stringify({ mcpServers: {} }));
  fs.writeFileSync(path.join(dir, 'instructions.md'), 'Answer briefly.');
  const configDir = path.join(dir, 'config');
  fs.mkdirSync(configDir, { mode: 0o700 });
  const args = buildCliArgs({ sessionId: randomUUID(), resume: false, mcpConfigPath: path.join(dir, 'mcp.json'), instructionsPath: path.join(dir, 'instructions.md'), model: 'claude-test', pinnedTools: [] });
  args.splice(args.indexOf('--permission-prompt-tool'), 2);
  // No prompt argument: turns come on stdin.
  args.splice(args.lastIndexOf('--'), 1, '--input-format', 'stream-json');
  const env = buildChildEnv({ inherited: { PATH: process.env.PATH, HOME: dir, LANG: 'C.UTF-8' }, model: { baseUrl: provider.url, capability: 'sk-ant-stream-input-test', mode: 'api-key' }, configDir });
  const child = spawn(locatePlatformBinary().binary, args, { env, cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] });
  closers.push(() => void child.kill('SIGKILL'));
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
  /** The next line from here on that matches, within `timeoutMs`. */
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
  return { child, lines, next, send: (message) => child.stdin.write(`${JSON.stringify(message)}\n`) };
}

const user = (text: string): Line => ({ type: 'user', message: { role: 'user', content: text } });
const isResult = (line: Line) => line.type === 'result';
const responseTo = (id: string) => (line: Line) => line.type === 'control_response' && (line.response as { request_id?: string } | undefined)?.request_id === id;

describe('the pinned CLI reading turns from stdin (stream-json input)', () => {
  it('test_one_process_answers_initialize_keeps_context_across_turns_survives_an_interrupt_and_exits_0_when_stdin_closes', async () => {
    const provider = await startModelProvider([{ blocks: [{ type: 'text', text: 'First answer, about Lisbon.' }] }]);
    closers.push(() => provider.close());
    const cli = startCli(provider);

    cli.send({ type: 'control_request', request_id: 'init-1', request: { subtype: 'initialize' } });
    expect(await cli.next(responseTo('init-1'))).toMatchObject({ response: { subtype: 'success', request_id: 'init-1' } });

    cli.send(user('Tell me about Lisbon.'));
    expect(await cli.next(isResult)).toMatchObject({ subtype: 'success', result: 'First answer, about Lisbon.' });

    // A turn whose model call never finishes, interrupted: the turn ends, the process stays.
    provider.push({ kind: 'hang', blocks: [{ type: 'text', text: 'Thinking' }] });
    cli.send(user('And Porto?'));
    await until(() => provider.conversationRequests().length === 2, 'the second turn to reach the provider', 30_000);
    cli.send({ type: 'control_request', request_id: 'stop-1', request: { subtype: 'interrupt' } });
    expect(await cli.next(responseTo('stop-1'))).toMatchObject({ response: { subtype: 'success', request_id: 'stop-1' } });
    expect(await cli.next(isResult)).toMatchObject({ subtype: 'error_during_execution' });
    expect(cli.child.exitCode).toBeNull();

    provider.push({ blocks: [{ type: 'text', text: 'Third answer.' }] });
    cli.send(user('Back to Lisbon: one word?'));
    expect(await cli.next(isResult)).toMatchObject({ subtype: 'success', result: 'Third answer.' });
    // The same process sent the earlier turn's answer with the new prompt: the context is kept.
    const third = provider.conversationRequests()[2]!.rawBody;
    expect(third).toContain('First answer, about Lisbon.');
    expect(third).toContain('Back to Lisbon: one word?');

    const exited = new Promise<number | null>((resolve) => cli.child.once('exit', (code) => resolve(code)));
    cli.child.stdin.end();
    await expect(exited).resolves.toBe(0);
  });
});
