/**
 * A server that speaks ONLY MCP 2026-07-28 (the SDK 2 server refusing initialize), used as a
 * person would with the built `ward`: `ward connections add` and `tools` list its tools after
 * the server/discover probe, and a real `ward run` calls them on the 2026-07-28 wire (per-request
 * _meta, MCP-Protocol-Version, Mcp-Method/Mcp-Name, an x-mcp-header argument mirrored into
 * Mcp-Param-Region; a tool with a malformed x-mcp-header left out). A tool that answers "input
 * required" asks the person through Ward's elicitor, and the same call continues with the answer:
 * one tool call in the journal, sent once and continued once, journaled as a call that continues.
 * The same over stdio: a 2026-only stdio server is probed with server/discover, and a 2025 stdio
 * server that exits on any request before initialize is started once more for the handshake.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startModelProvider, toolResultsIn, type ModelProvider } from '../fixtures/model-provider/provider.js';
import { startModernOnlyServer, type ModernServer } from '../fixtures/mcp-servers/modern-only.js';
import { onTerminal } from '../support/pty.js';
import { tempDir } from '../support/temp.js';
import { CANARY_KEY } from '../app/runs/harness.js';
import { WARD_BIN, ward } from '../support/ward-cli.js';
import { STDIO_SERVER } from './support.js';

const MODERN_STDIO_SERVER = path.resolve('test/fixtures/mcp-servers/modern-only-stdio.mjs');

let server: ModernServer | undefined;
let provider: ModelProvider | undefined;
afterEach(async () => {
  await server?.close();
  await provider?.close();
  server = undefined;
  provider = undefined;
});

interface Home {
  readonly root: string;
  readonly env: NodeJS.ProcessEnv;
  run(args: readonly string[]): ReturnType<typeof ward>;
}

async function home(): Promise<Home> {
  const root = fs.realpathSync(tempDir('ward-modern-'));
  const wardHome = path.join(root, 'home');
  fs.mkdirSync(wardHome);
  fs.writeFileSync(path.join(wardHome, 'settings.json'), JSON.stringify({ credentialStore: 'file' }));
  provider = await startModelProvider();
  server = await startModernOnlyServer();
  const env = { PATH: process.env.PATH, HOME: root, TMPDIR: root, WARD_HOME: wardHome, ANTHROPIC_API_KEY: CANARY_KEY, WARD_MODEL_BASE_URL: provider.url, TERM: 'dumb' };
  const run = (args: readonly string[]): ReturnType<typeof ward> => ward(args, { env, timeoutMs: 90_000 });
  expect(await run(['connections', 'add', 'modern', '--url', server.url])).toMatchObject({ code: 0 });
  const instructions = path.join(root, 'instructions.md');
  fs.writeFileSync(instructions, 'Use the tools.');
  const listed = await run(['connections', 'tools', 'modern', '--json']);
  expect(listed.code, listed.stderr).toBe(0);
  const tools = (JSON.parse(listed.stdout) as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name).sort();
  // `broken` declares an empty x-mcp-header: left out, the valid tools kept.
  expect(tools).toEqual(['confirm', 'echo', 'regional']);
  expect(await run(['agents', 'create', 'helper', '--instructions-file', instructions, '--tool', 'modern/echo', '--tool', 'modern/regional', '--tool', 'modern/confirm'])).toMatchObject({ code: 0 });
  return { root, env, run };
}

describe('a server that speaks only MCP 2026-07-28', () => {
  it('test_ward_connections_tools_lists_it_and_ward_run_calls_its_tools_on_the_2026_wire_with_standard_and_param_headers', async () => {
    const h = await home();
    provider!.push(
      { blocks: [{ type: 'tool_use', name: 'mcp__ward__modern__echo', input: { text: 'hello-2026' } }] },
      { blocks: [{ type: 'tool_use', name: 'mcp__ward__modern__regional', input: { region: 'us-west1' } }] },
      { blocks: [{ type: 'text', text: 'done' }] },
    );
    const run = await h.run(['run', '--json', '--agent', 'helper', '--', 'call them']);
    expect(run.code, run.stderr).toBe(0);
    const results = JSON.stringify(provider!.conversationRequests().flatMap(toolResultsIn));
    expect(results).toContain('echo: hello-2026');
    expect(results).toContain('region us-west1, header us-west1');

    const seen = server!.seen;
    expect(seen.some((request) => request.method === 'initialize')).toBe(false);
    expect(seen[0]?.method).toBe('server/discover');
    for (const request of seen) {
      expect(request.headers['mcp-protocol-version'], request.method).toBe('2026-07-28');
      expect(request.headers['mcp-method'], request.method).toBe(request.method);
    }
    const calls = seen.filter((request) => request.method === 'tools/call');
    // Exactly one attempt per call (B6), each named in Mcp-Name.
    expect(calls.map((call) => [call.tool, call.headers['mcp-name']])).toEqual([
      ['echo', 'echo'],
      ['regional', 'regional'],
    ]);
  });

  it('test_an_input_required_result_asks_the_person_and_the_same_call_continues_with_the_answer_once', async () => {
    const h = await home();
    provider!.push({ blocks: [{ type: 'tool_use', name: 'mcp__ward__modern__confirm', input: {} }] }, { blocks: [{ type: 'text', text: 'thanks' }] });
    // The default (true) for the one field, then accept.
    const { code, screen } = await onTerminal([process.execPath, WARD_BIN, 'run', '--agent', 'helper', '--', 'confirm it'], { env: h.env, cwd: h.root, when: 'asks for input:', typed: '\ra\r', timeoutMs: 60_000 });
    expect(code, screen).toBe(0);
    expect(screen).toContain('Confirm the change?');
    expect(JSON.stringify(provider!.conversationRequests().flatMap(toolResultsIn))).toContain('confirmed: true');
    // Sent once, continued once with the answer: never re-sent without it.
    expect(server!.seen.filter((request) => request.method === 'tools/call').map((call) => [call.tool, call.continued])).toEqual([
      ['confirm', false],
      ['confirm', true],
    ]);
    const conversation = (JSON.parse((await h.run(['conversations', '--json'])).stdout.split('\n')[0]!) as { id: string }).id;
    const events = (await h.run(['replay', conversation, '--json'])).stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; payload: Record<string, unknown> });
    expect(events.filter((event) => event.type === 'tool_result')).toHaveLength(1);
    expect(events.find((event) => event.type === 'elicitation_requested')?.payload).toMatchObject({ server: 'modern', mode: 'form', message: 'Confirm the change?', continuesCall: true });
    expect(events.find((event) => event.type === 'elicitation_answered')?.payload).toMatchObject({ action: 'accept', content: { confirmed: true } });
  });
});

/** A home with one stdio connection `local` (started as `node SERVER ARGS…`) and an agent allowed its `echo` and `confirm`. */
async function stdioHome(server: string, args: readonly string[]): Promise<Home> {
  const root = fs.realpathSync(tempDir('ward-modern-stdio-'));
  const wardHome = path.join(root, 'home');
  fs.mkdirSync(wardHome);
  fs.writeFileSync(path.join(wardHome, 'settings.json'), JSON.stringify({ credentialStore: 'file' }));
  provider = await startModelProvider();
  const env = { PATH: process.env.PATH, HOME: root, TMPDIR: root, WARD_HOME: wardHome, ANTHROPIC_API_KEY: CANARY_KEY, WARD_MODEL_BASE_URL: provider.url, TERM: 'dumb' };
  const run = (argv: readonly string[]): ReturnType<typeof ward> => ward(argv, { env, timeoutMs: 90_000 });
  const added = await run(['connections', 'add', 'local', '--command', process.execPath, '--arg', server, ...args.map((arg) => `--arg=${arg}`)]);
  expect(added.code, added.stderr).toBe(0);
  const instructions = path.join(root, 'instructions.md');
  fs.writeFileSync(instructions, 'Use the tools.');
  return { root, env, run };
}

describe('stdio servers of either revision', () => {
  it('test_a_stdio_server_that_speaks_only_2026_07_28_is_probed_listed_and_called_and_its_input_required_call_continues', async () => {
    const log = path.join(tempDir('ward-modern-log-'), 'requests.log');
    const h = await stdioHome(MODERN_STDIO_SERVER, ['--log', log]);
    const listed = await h.run(['connections', 'tools', 'local', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name).sort()).toEqual(['confirm', 'echo']);
    expect(await h.run(['agents', 'create', 'helper', '--instructions-file', path.join(h.root, 'instructions.md'), '--tool', 'local/echo', '--tool', 'local/confirm'])).toMatchObject({ code: 0 });
    provider!.push(
      { blocks: [{ type: 'tool_use', name: 'mcp__ward__local__echo', input: { text: 'hello-stdio-2026' } }] },
      { blocks: [{ type: 'tool_use', name: 'mcp__ward__local__confirm', input: {} }] },
      { blocks: [{ type: 'text', text: 'done' }] },
    );
    const { code, screen } = await onTerminal([process.execPath, WARD_BIN, 'run', '--agent', 'helper', '--', 'call them'], { env: h.env, cwd: h.root, when: 'asks for input:', typed: '\ra\r', timeoutMs: 60_000 });
    expect(code, screen).toBe(0);
    const results = JSON.stringify(provider!.conversationRequests().flatMap(toolResultsIn));
    expect(results).toContain('echo: hello-stdio-2026');
    expect(results).toContain('confirmed: true');
    const requests = fs.readFileSync(log, 'utf8').trim().split('\n');
    // Each start of the server begins with the probe; none sends initialize (the server refuses it).
    expect(requests).not.toContain('initialize');
    expect(requests[0]).toBe('server/discover');
    expect(requests.filter((request) => request.startsWith('tools/call'))).toEqual(['tools/call echo', 'tools/call confirm', 'tools/call confirm continued']);
  });

  it('test_a_2025_stdio_server_that_exits_on_the_probe_is_started_again_for_initialize_and_works', async () => {
    const pids = path.join(tempDir('ward-strict-pids-'), 'pids');
    const h = await stdioHome(STDIO_SERVER, ['--strict-start', '--pid-file', pids]);
    const listed = await h.run(['connections', 'tools', 'local', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name)).toContain('echo');
    expect(await h.run(['agents', 'create', 'helper', '--instructions-file', path.join(h.root, 'instructions.md'), '--tool', 'local/echo'])).toMatchObject({ code: 0 });
    provider!.push({ blocks: [{ type: 'tool_use', name: 'mcp__ward__local__echo', input: { text: 'hello-strict-2025' } }] }, { blocks: [{ type: 'text', text: 'done' }] });
    const run = await h.run(['run', '--json', '--agent', 'helper', '--', 'call it']);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.stringify(provider!.conversationRequests().flatMap(toolResultsIn))).toContain('hello-strict-2025');
    // Two starts per session (the probe ended the first); never more.
    const starts = fs.readFileSync(pids, 'utf8').trim().split('\n').length;
    expect(starts % 2).toBe(0);
    expect(starts).toBeGreaterThanOrEqual(2);
  });
});
