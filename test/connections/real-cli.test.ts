import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Broker } from '../../main/broker/broker.js';
import type { BrokerEvent } from '../../main/broker/types.js';
import { buildCliArgs } from '../../main/runner/argv.js';
import { buildChildEnv } from '../../main/runner/env.js';
import { locatePlatformBinary } from '../../main/runner/pin.js';
import { startModelProvider, toolResultsIn, type ModelProvider } from '../fixtures/model-provider/provider.js';
import { followToCallback } from '../fixtures/oidc/provider.js';
import { startProtectedServer, type ProtectedServer } from '../fixtures/mcp-oauth/protected-server.js';
import { harness, stdioSpec } from './support.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/**
 * Runs the pinned CLI for one turn, as the runner does (argv array, allowlisted env, private
 * mcp.json, the turn as a stream-json line whose input ends after the result), and returns its
 * stream-json lines.
 */
function runCli(args: string[], env: Record<string, string>, prompt: string): Promise<{ code: number | null; lines: Array<Record<string, unknown>>; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(locatePlatformBinary().binary, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes('"type":"result"')) child.stdin.end();
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, lines: stdout.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>) });
    });
    child.stdin.write(`${JSON.stringify({ type: 'user', message: { role: 'user', content: prompt } })}\n`);
  });
}

describe('the real CLI and two connections', () => {
  it('test_calls_tools_of_a_stdio_and_an_oauth_protected_http_connection_in_one_run_through_the_broker_the_token_never_reaches_the_model', async () => {
    const remote: ProtectedServer = await startProtectedServer();
    closers.push(() => remote.close());
    const h = harness();
    await h.manager.add(stdioSpec('local'));
    await h.manager.add({ transport: 'http', name: 'remote', url: remote.url });
    await h.manager.login('remote', {
      timeoutMs: 20_000,
      openBrowser: async (url) => void (await fetch(await followToCallback(url))).arrayBuffer(),
    });
    await h.manager.discover('local');
    await h.manager.discover('remote');
    const routes = h.manager.routes().filter((route) => ['local__echo', 'remote__echo'].includes(route.exposedName));
    expect(routes).toHaveLength(2);

    const provider: ModelProvider = await startModelProvider([
      {
        blocks: [
          { type: 'tool_use', name: 'mcp__ward__local__echo', input: { text: 'from-local-7' } },
          { type: 'tool_use', name: 'mcp__ward__remote__echo', input: { text: 'from-remote-9' } },
        ],
      },
      { blocks: [{ type: 'text', text: 'Both tools answered.' }] },
    ]);
    closers.push(() => provider.close());
    const broker = await Broker.start();
    closers.push(() => broker.close());
    const events: BrokerEvent[] = [];
    const registration = broker.register({ runId: 'two-connections', tools: routes, upstreams: h.manager.caller, isAcceptingCalls: () => true, onEvent: (event) => events.push(event) });
    closers.push(() => registration.close());

    const dir = fs.mkdtempSync(path.join(h.dir, 'run-'));
    fs.chmodSync(dir, 0o700);
    const mcpConfig = path.join(dir, 'mcp.json');
    fs.writeFileSync(mcpConfig, JSON.stringify({ mcpServers: { ward: { type: 'http', url: registration.url, headers: { Authorization: `Bearer ${registration.capability}` } } } }), { mode: 0o600 });
    const instructions = path.join(dir, 'instructions.md');
    fs.writeFileSync(instructions, 'Use the tools.', { mode: 0o600 });
    const configDir = path.join(dir, 'config');
    fs.mkdirSync(configDir, { mode: 0o700 });
    const args = buildCliArgs({ sessionId: randomUUID(), resume: false, mcpConfigPath: mcpConfig, instructionsPath: instructions, model: 'claude-test', pinnedTools: routes.map((route) => route.exposedName) });
    const env = buildChildEnv({ inherited: { PATH: process.env.PATH, HOME: dir, LANG: 'C.UTF-8' }, model: { baseUrl: provider.url, capability: 'sk-ant-test-key', mode: 'api-key' }, configDir });

    const run = await runCli(args, env, 'Call both tools.');
    const result = run.lines.find((line) => line.type === 'result');
    expect(result, run.stderr).toMatchObject({ subtype: 'success', is_error: false });
    const init = run.lines.find((line) => line.type === 'system' && line.subtype === 'init') as { tools: string[] } | undefined;
    expect(init?.tools).toEqual(expect.arrayContaining(['mcp__ward__local__echo', 'mcp__ward__remote__echo']));

    const second = provider.conversationRequests()[1]!;
    expect(JSON.stringify(toolResultsIn(second))).toContain('from-local-7');
    expect(JSON.stringify(toolResultsIn(second))).toContain('from-remote-9');
    expect(events.filter((event) => event.kind === 'tool_call_finished').map((event) => [event.tool, event.ok]).sort()).toEqual([
      ['local__echo', true],
      ['remote__echo', true],
    ]);
    // The remote server got its token; the model provider (what the child talks to) never saw it.
    const token = remote.authorizations.at(-1)!.replace(/^Bearer /, '');
    expect(token.length).toBeGreaterThan(20);
    expect(JSON.stringify(provider.requests).includes(token)).toBe(false);
  });
});
