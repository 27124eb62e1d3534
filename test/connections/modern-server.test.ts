/**
 * A server that speaks ONLY MCP 2026-07-28 (the SDK 2 server refusing initialize), used as a
 * person would with the built `ward`: `ward connections add` and `tools` list its tools after
 * the server/discover probe, and a real `ward run` calls them on the 2026-07-28 wire (per-request
 * _meta, MCP-Protocol-Version, Mcp-Method/Mcp-Name, an x-mcp-header argument mirrored into
 * Mcp-Param-Region; a tool with a malformed x-mcp-header left out). A tool that answers "input
 * required" asks the person through Ward's elicitor, and the same call continues with the answer:
 * one tool call in the journal, sent once and continued once.
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
    expect(events.find((event) => event.type === 'elicitation_requested')?.payload).toMatchObject({ server: 'modern', mode: 'form', message: 'Confirm the change?' });
    expect(events.find((event) => event.type === 'elicitation_answered')?.payload).toMatchObject({ action: 'accept', content: { confirmed: true } });
  });
});
