/** How the broker frames MCP over HTTP: quick answers as JSON, slow ones as SSE with keep-alives, and the protocol's refusals. */
import { request, type IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Broker } from '../../main/broker/broker.js';
import { openUpstreams, type Upstreams } from '../../main/upstreams/upstreams.js';
import { startHttpFixture, type HttpFixture } from '../fixtures/mcp-servers/http.js';
import { connectClient, pin, registerRun, textOf, type TestRun } from './helpers.js';

const SSE_AFTER_MS = 200;
const KEEP_ALIVE_MS = 50;
const ACCEPT_BOTH = 'application/json, text/event-stream';

interface RawResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

function send(url: string, method: string, headers: Record<string, string>, body?: unknown): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body));
  });
}

let broker: Broker;
let fixture: HttpFixture;
let upstreams: Upstreams;
let run: TestRun;

/** An initialized session spoken to in raw HTTP, so tests see the framing an SDK client hides. */
async function openSession(): Promise<{ post: (body: unknown, headers?: Record<string, string>) => Promise<RawResponse>; sessionId: string; auth: Record<string, string> }> {
  const auth = { authorization: `Bearer ${run.registration.capability}` };
  const init = await send(run.registration.url, 'POST', { ...auth, 'content-type': 'application/json', accept: ACCEPT_BOTH }, {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  expect(init.status).toBe(200);
  const sessionId = init.headers['mcp-session-id'] as string;
  const base = { ...auth, 'content-type': 'application/json', accept: ACCEPT_BOTH, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' };
  const post = (body: unknown, headers: Record<string, string> = {}): Promise<RawResponse> => send(run.registration.url, 'POST', { ...base, ...headers }, body);
  expect((await post({ jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(202);
  return { post, sessionId, auth };
}

function call(id: number, name: string, args: Record<string, unknown>): unknown {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } };
}

beforeAll(async () => {
  broker = await Broker.start({ sseAfterMs: SSE_AFTER_MS, keepAliveMs: KEEP_ALIVE_MS });
  fixture = await startHttpFixture();
  upstreams = await openUpstreams({ fx: { type: 'http', url: fixture.url } });
  run = registerRun(broker, 'run-transport', await pin(upstreams, 'fx', ['echo', 'slow']), upstreams);
});

afterAll(async () => {
  await broker.close();
  await upstreams.close();
  await fixture.close();
});

describe('broker HTTP framing', () => {
  it('test_answers_a_quick_call_with_one_json_body', async () => {
    const session = await openSession();
    const answer = await session.post(call(1, 'fx_echo', { text: 'quick' }));
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('application/json');
    expect(answer.headers['mcp-session-id']).toBe(session.sessionId);
    expect(JSON.parse(answer.body)).toEqual({ jsonrpc: '2.0', id: 1, result: { isError: false, content: [{ type: 'text', text: 'quick' }] } });
  });

  it('test_turns_a_call_slower_than_the_json_window_into_an_sse_stream_that_keeps_the_connection_alive_until_the_answer', async () => {
    const session = await openSession();
    const answer = await session.post(call(2, 'fx_slow', { ms: SSE_AFTER_MS + 6 * KEEP_ALIVE_MS }));
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('text/event-stream');
    const [beforeAnswer, message] = answer.body.split('event: message\n');
    expect(beforeAnswer!.match(/^: keepalive$/gm)?.length ?? 0).toBeGreaterThanOrEqual(2);
    expect(JSON.parse(message!.replace(/^data: /, '').trim())).toEqual({ jsonrpc: '2.0', id: 2, result: { isError: false, content: [{ type: 'text', text: 'slept' }] } });
  });

  it('test_gives_an_sdk_client_what_the_cli_uses_both_kinds_of_answer', async () => {
    const client = await connectClient(run.registration.url, run.registration.capability);
    try {
      expect(textOf(await client.callTool({ name: 'fx_echo', arguments: { text: 'json' } }))).toBe('json');
      expect(textOf(await client.callTool({ name: 'fx_slow', arguments: { ms: SSE_AFTER_MS * 2 } }))).toBe('slept');
    } finally {
      await client.close();
    }
  });

  it('test_refuses_a_second_request_with_an_id_that_is_still_in_flight', async () => {
    const session = await openSession();
    const first = session.post(call(7, 'fx_slow', { ms: 300 }));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const second = await session.post(call(7, 'fx_echo', { text: 'again' }));
    expect(second.status).toBe(409);
    expect(JSON.parse(second.body).error.message).toMatch(/request id 7 is already in flight/);
    expect((await first).body).toContain('slept');
  });

  it('test_answers_what_it_does_not_serve_with_the_status_the_protocol_names', async () => {
    const session = await openSession();
    const get = await send(run.registration.url, 'GET', { ...session.auth, accept: 'text/event-stream', 'mcp-session-id': session.sessionId });
    expect([get.status, get.headers.allow]).toEqual([405, 'POST, DELETE']);

    const batch = await session.post([call(3, 'fx_echo', { text: 'a' }), call(4, 'fx_echo', { text: 'b' })]);
    expect([batch.status, JSON.parse(batch.body).error.message]).toEqual([400, 'Invalid Request: JSON-RPC batches are not supported']);
    expect((await session.post(call(5, 'fx_echo', { text: 'a' }), { accept: 'application/json' })).status).toBe(406);
    expect((await session.post(call(5, 'fx_echo', { text: 'a' }), { 'content-type': 'text/plain' })).status).toBe(415);
    expect((await session.post({ hello: 'world' })).status).toBe(400);
    const version = await session.post(call(5, 'fx_echo', { text: 'a' }), { 'mcp-protocol-version': '1999-01-01' });
    expect([version.status, JSON.parse(version.body).error.message]).toEqual([400, 'Bad Request: Unsupported protocol version: 1999-01-01']);
    const reinit = await session.post({ jsonrpc: '2.0', id: 6, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    expect([reinit.status, JSON.parse(reinit.body).error.message]).toEqual([400, 'Invalid Request: Server already initialized']);
    // None of that broke the session.
    expect(JSON.parse((await session.post(call(8, 'fx_echo', { text: 'still here' }))).body).result.content[0].text).toBe('still here');
  });

  it('test_ends_a_session_on_delete_after_which_its_id_is_unknown', async () => {
    const session = await openSession();
    const deleted = await send(run.registration.url, 'DELETE', { ...session.auth, 'mcp-session-id': session.sessionId });
    expect(deleted.status).toBe(200);
    const after = await session.post(call(9, 'fx_echo', { text: 'gone' }));
    expect(after.status).toBe(404);
  });
});
