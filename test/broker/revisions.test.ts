/**
 * The broker speaks MCP 2026-07-28 (stateless: server/discover, per-request `_meta`, the
 * Mcp-Method/Mcp-Name headers) next to the 2025 revisions on sessions, behind the same B1 checks.
 */
import { request } from 'node:http';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Broker } from '../../main/broker/broker.js';
import { warmUp } from '../../main/broker/mcp-session.js';
import { openUpstreams, type Upstreams } from '../../main/upstreams/upstreams.js';
import { until } from '../support/wait.js';
import { connectClient, pin, registerRun, STDIO_FIXTURE, textOf, type TestRun } from './helpers.js';

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

interface Reply {
  readonly status: number;
  readonly text: string;
  /** The JSON-RPC message of the answer, from a JSON body or the SSE stream's message event. */
  readonly message: { id?: unknown; result?: Record<string, unknown>; error?: { code: number; message: string } } | null;
}

function messageOf(text: string): Reply['message'] {
  const data = text.split('\n').find((line) => line.startsWith('data: {'));
  try {
    return JSON.parse(data === undefined ? text : data.slice('data: '.length)) as Reply['message'];
  } catch {
    return null;
  }
}

/** A raw 2026-07-28 POST of `method`: the headers a stateless client sends (each overridable, undefined leaves one out) and `params` with the `_meta` envelope. */
function post(url: string, method: string, params: Record<string, unknown>, headers: Record<string, string | undefined>, id: unknown = 7, meta: Record<string, unknown> = META): Promise<Reply> {
  const body = JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } });
  const all: Record<string, string> = {};
  const given = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, ...headers };
  for (const [name, value] of Object.entries(given)) if (value !== undefined) all[name] = value;
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: all }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, text, message: messageOf(text) });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

let broker: Broker;
let upstreams: Upstreams;
let run: TestRun;
let bearer: string;

beforeAll(async () => {
  broker = await Broker.start();
  upstreams = await openUpstreams({ fx: { type: 'stdio', command: process.execPath, args: STDIO_FIXTURE } });
  run = registerRun(broker, 'run-2026', await pin(upstreams, 'fx', ['echo', 'slow']), upstreams);
  bearer = `Bearer ${run.registration.capability}`;
});

afterAll(async () => {
  await broker.close();
  await upstreams.close();
});

describe('broker protocol revisions', () => {
  it('test_answers_server_discover_with_2026_07_28_and_its_tools_capability', async () => {
    const reply = await post(run.registration.url, 'server/discover', {}, { authorization: bearer });
    expect(reply.status).toBe(200);
    expect(reply.message?.result).toMatchObject({ supportedVersions: ['2026-07-28'], capabilities: { tools: {} }, cacheScope: 'private' });
  });

  it('test_the_warm_up_after_the_spawn_takes_the_path_of_the_clis_first_request_a_2026_server_discover', async () => {
    // Issue 29: the SDK's first-use cost is spent while the CLI starts only if the warm-up goes
    // where the CLI's server/discover goes (classified modern, answered 200), not an error path.
    const warmed = await warmUp();
    expect(warmed.classified).not.toBe('legacy');
    expect(warmed.status).toBe(200);
    expect(messageOf(warmed.answer)?.result).toMatchObject({ supportedVersions: ['2026-07-28'], capabilities: { tools: {} } });
  });

  it('test_serves_a_stateless_tools_list_with_cache_hints_and_a_tools_call_without_any_session', async () => {
    const list = await post(run.registration.url, 'tools/list', {}, { authorization: bearer });
    expect(list.status).toBe(200);
    expect(list.text).not.toContain('Mcp-Session-Id');
    expect(list.message?.result).toMatchObject({ cacheScope: 'private', ttlMs: expect.any(Number) });
    expect((list.message?.result?.tools as { name: string }[]).map((tool) => tool.name).sort()).toEqual(['fx_echo', 'fx_slow']);

    const params = { name: 'fx_echo', arguments: { text: 'stateless' } };
    const call = await post(run.registration.url, 'tools/call', params, { authorization: bearer, 'mcp-name': 'fx_echo' });
    expect(call.status).toBe(200);
    expect(textOf(call.message?.result)).toBe('stateless');
    expect(run.events.filter((event) => event.kind === 'tool_call_finished').at(-1)).toMatchObject({ tool: 'fx_echo', ok: true });
  });

  it('test_refuses_stateless_requests_without_the_capability_from_a_foreign_host_or_with_any_origin_as_before_b1', async () => {
    const wrong = `Bearer ${Buffer.alloc(32, 7).toString('base64url')}`;
    const call = { name: 'fx_echo', arguments: { text: 'nope' } };
    const callsBefore = run.events.length;
    for (const [method, params, name] of [['tools/list', {}, undefined], ['tools/call', call, 'fx_echo'], ['server/discover', {}, undefined]] as const) {
      expect((await post(run.registration.url, method, params, { 'mcp-name': name })).status).toBe(401);
      expect((await post(run.registration.url, method, params, { 'mcp-name': name, authorization: wrong })).status).toBe(401);
      const foreign = await post(run.registration.url, method, params, { 'mcp-name': name, authorization: bearer, host: 'evil.example' });
      expect(foreign.status).toBe(403);
      for (const origin of ['https://evil.example', `http://127.0.0.1:${broker.port}`, 'null']) {
        expect((await post(run.registration.url, method, params, { 'mcp-name': name, authorization: bearer, origin })).status).toBe(403);
      }
    }
    // Nothing refused reached the upstream or the journal.
    expect(run.events.length).toBe(callsBefore);
  });

  it('test_refuses_an_mcp_method_header_that_disagrees_with_the_body_with_32020_naming_the_request_id', async () => {
    const mismatch = await post(run.registration.url, 'tools/list', {}, { authorization: bearer, 'mcp-method': 'prompts/list' }, 'req-41');
    expect(mismatch.status).toBe(400);
    expect(mismatch.message).toMatchObject({ id: 'req-41', error: { code: -32020 } });
    const missing = await post(run.registration.url, 'tools/list', {}, { authorization: bearer, 'mcp-method': undefined }, 42);
    expect(missing.status).toBe(400);
    expect(missing.message).toMatchObject({ id: 42, error: { code: -32020 } });
    const callsBefore = run.events.length;
    const wrongName = await post(run.registration.url, 'tools/call', { name: 'fx_echo', arguments: { text: 'x' } }, { authorization: bearer, 'mcp-name': 'approve' }, 43);
    expect(wrongName.status).toBe(400);
    expect(wrongName.message).toMatchObject({ id: 43, error: { code: -32020 } });
    expect(run.events.length).toBe(callsBefore);
  });

  it('test_answers_methods_2026_07_28_removed_with_404_and_a_request_without_its_meta_fields_with_400', async () => {
    const ping = await post(run.registration.url, 'ping', {}, { authorization: bearer }, 44);
    expect(ping.status).toBe(404);
    expect(ping.message).toMatchObject({ id: 44, error: { code: -32601 } });
    const incomplete = await post(run.registration.url, 'tools/list', {}, { authorization: bearer }, 45, { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' });
    expect(incomplete.status).toBe(400);
    expect(incomplete.message).toMatchObject({ id: 45, error: { code: -32602 } });
  });

  it('test_serves_an_sdk_2_client_which_discovers_and_stays_stateless', async () => {
    const client = new ModernClient({ name: 'ward-test', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new ModernTransport(new URL(run.registration.url), { requestInit: { headers: { Authorization: bearer } } }));
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(['fx_echo', 'fx_slow']);
    expect(textOf(await client.callTool({ name: 'fx_echo', arguments: { text: 'modern' } }))).toBe('modern');
    await client.close();
  });

  it('test_still_serves_a_2025_client_on_a_session_initialize_then_mcp_session_id', async () => {
    const client = await connectClient(run.registration.url, run.registration.capability);
    expect(client.getServerVersion()?.name).toBe('ward');
    expect(textOf(await client.callTool({ name: 'fx_echo', arguments: { text: 'session' } }))).toBe('session');
    await client.close();
  });

  it('test_streams_a_stateless_tool_call_with_keep_alives_and_a_child_that_hangs_up_does_not_cancel_it', async () => {
    const ticking = await Broker.start({ keepAliveMs: 50 });
    try {
      const slow = registerRun(ticking, 'run-slow', await pin(upstreams, 'fx', ['slow']), upstreams);
      const auth = `Bearer ${slow.registration.capability}`;
      const answer = await post(slow.registration.url, 'tools/call', { name: 'fx_slow', arguments: { ms: 400 } }, { authorization: auth, 'mcp-name': 'fx_slow' });
      expect(answer.status).toBe(200);
      expect(answer.text.split('data: ')[0]!.match(/^: keepalive$/gm)?.length ?? 0).toBeGreaterThanOrEqual(2);
      expect(textOf(answer.message?.result)).toBe('slept');

      // As on a session: the call goes on and is journaled as done (a killed child leaves the run uncertain).
      const body = JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'fx_slow', arguments: { ms: 300 }, _meta: META } });
      const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'fx_slow', authorization: auth };
      const req = request(slow.registration.url, { method: 'POST', headers });
      req.on('error', () => undefined);
      req.end(body);
      await until(() => slow.events.filter((event) => event.kind === 'tool_call_started').length === 2, 'the second call to start');
      req.destroy();
      await until(() => slow.events.filter((event) => event.kind === 'tool_call_finished').length === 2, 'the second call to finish');
      expect(slow.events.at(-1)).toMatchObject({ kind: 'tool_call_finished', tool: 'fx_slow', ok: true });
    } finally {
      await ticking.close();
    }
  });
});
