/** B1: who may talk to the broker at all. */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Broker } from '../../main/broker/broker.js';
import { openUpstreams, type Upstreams } from '../../main/upstreams/upstreams.js';
import { startHttpFixture, type HttpFixture } from '../fixtures/mcp-servers/http.js';
import { connectClient, pin, registerRun, textOf, type TestRun } from './helpers.js';

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

/** A raw request, so tests can send headers an SDK client never would. */
function raw(url: string, headers: Record<string, string>, body = INITIALIZE): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

let broker: Broker;
let fixture: HttpFixture;
let upstreams: Upstreams;
let runA: TestRun;
let runB: TestRun;

beforeAll(async () => {
  broker = await Broker.start({ maxBodyBytes: 64 * 1024 });
  fixture = await startHttpFixture();
  upstreams = await openUpstreams({ fx: { type: 'http', url: fixture.url } });
  const tools = await pin(upstreams, 'fx', ['echo']);
  runA = registerRun(broker, 'run-a', tools, upstreams);
  runB = registerRun(broker, 'run-b', tools, upstreams);
});

afterAll(async () => {
  await broker.close();
  await upstreams.close();
  await fixture.close();
});

describe('broker access (B1)', () => {
  it('test_serves_a_pinned_tool_to_a_client_holding_the_run_capability', async () => {
    const client = await connectClient(runA.registration.url, runA.registration.capability);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(['fx_echo']);
    expect(textOf(await client.callTool({ name: 'fx_echo', arguments: { text: 'hello' } }))).toBe('hello');
    await client.close();
  });

  it('test_mints_a_32_byte_base64url_capability_and_keeps_it_out_of_the_url', () => {
    expect(runA.registration.capability).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(runA.registration.capability, 'base64url')).toHaveLength(32);
    expect(runA.registration.url).toBe(`http://127.0.0.1:${broker.port}/runs/run-a/mcp`);
    expect(runA.registration.url).not.toContain(runA.registration.capability);
    expect(runA.registration.capability).not.toBe(runB.registration.capability);
  });

  it('test_answers_401_without_an_authorization_header', async () => {
    expect((await raw(runA.registration.url, {})).status).toBe(401);
    await expect(connectClient(runA.registration.url)).rejects.toThrow(/401|capability|Unauthorized/i);
  });

  it('test_answers_401_to_a_wrong_capability', async () => {
    const wrong = Buffer.alloc(32, 7).toString('base64url');
    expect((await raw(runA.registration.url, { authorization: `Bearer ${wrong}` })).status).toBe(401);
    expect((await raw(runA.registration.url, { authorization: `Bearer ${runA.registration.capability}x` })).status).toBe(401);
    expect((await raw(runA.registration.url, { authorization: runA.registration.capability })).status).toBe(401);
  });

  it("test_refuses_run_as_capability_on_run_bs_url", async () => {
    expect((await raw(runB.registration.url, { authorization: `Bearer ${runA.registration.capability}` })).status).toBe(401);
    expect((await raw(runB.registration.url, { authorization: `Bearer ${runB.registration.capability}` })).status).toBe(200);
  });

  it('test_answers_403_to_a_non_loopback_host_header_even_with_the_right_capability', async () => {
    const reply = await raw(runA.registration.url, { host: 'evil.example', authorization: `Bearer ${runA.registration.capability}` });
    expect(reply.status).toBe(403);
    expect(reply.body).toContain('Host');
    const wrongPort = await raw(runA.registration.url, { host: `127.0.0.1:${broker.port + 1}`, authorization: `Bearer ${runA.registration.capability}` });
    expect(wrongPort.status).toBe(403);
    const localhost = await raw(runA.registration.url, { host: `localhost:${broker.port}`, authorization: `Bearer ${runA.registration.capability}` });
    expect(localhost.status).toBe(200);
  });

  it('test_answers_403_to_any_origin_header_so_no_browser_page_can_call_it', async () => {
    for (const origin of ['https://evil.example', `http://127.0.0.1:${broker.port}`, 'null']) {
      const reply = await raw(runA.registration.url, { origin, authorization: `Bearer ${runA.registration.capability}` });
      expect(reply.status).toBe(403);
    }
  });

  it('test_answers_413_to_a_body_over_the_bound_before_parsing_it', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { pad: 'x'.repeat(70 * 1024) } });
    const reply = await raw(runA.registration.url, { authorization: `Bearer ${runA.registration.capability}` }, body);
    expect(reply.status).toBe(413);
  });

  it('test_answers_404_to_paths_that_name_no_run', async () => {
    expect((await raw(`http://127.0.0.1:${broker.port}/runs/nope/mcp`, { authorization: `Bearer ${runA.registration.capability}` })).status).toBe(404);
    expect((await raw(`http://127.0.0.1:${broker.port}/mcp`, { authorization: `Bearer ${runA.registration.capability}` })).status).toBe(404);
  });

  it('test_refuses_a_call_after_the_run_ended_on_an_open_session_and_on_a_new_one', async () => {
    const run = registerRun(broker, 'run-ended', await pin(upstreams, 'fx', ['echo']), upstreams);
    const client = await connectClient(run.registration.url, run.registration.capability);
    await run.registration.close();
    await expect(client.callTool({ name: 'fx_echo', arguments: { text: 'late' } })).rejects.toThrow();
    expect((await raw(run.registration.url, { authorization: `Bearer ${run.registration.capability}` })).status).toBe(404);
    expect(run.events).toEqual([]);
    await client.close().catch(() => undefined);
  });

  it('test_bounds_the_mcp_sessions_one_run_may_open', async () => {
    const narrow = await Broker.start({ maxSessionsPerRun: 1 });
    try {
      const run = registerRun(narrow, 'one-session', await pin(upstreams, 'fx', ['echo']), upstreams);
      const client = await connectClient(run.registration.url, run.registration.capability);
      expect((await raw(run.registration.url, { host: `127.0.0.1:${narrow.port}`, authorization: `Bearer ${run.registration.capability}` })).status).toBe(429);
      await client.close();
      await run.registration.close();
    } finally {
      await narrow.close();
    }
  });

  it('test_gives_a_run_registered_again_after_it_ended_a_fresh_capability_and_the_old_one_stops_working', async () => {
    const tools = await pin(upstreams, 'fx', ['echo']);
    const first = registerRun(broker, 'run-again', tools, upstreams);
    await first.registration.close();
    const second = registerRun(broker, 'run-again', tools, upstreams);
    expect(second.registration.capability).not.toBe(first.registration.capability);
    expect((await raw(second.registration.url, { authorization: `Bearer ${first.registration.capability}` })).status).toBe(401);
    expect((await raw(second.registration.url, { authorization: `Bearer ${second.registration.capability}` })).status).toBe(200);
    await second.registration.close();
  });

  it('test_refuses_to_register_a_binding_with_a_duplicate_or_tampered_tool', async () => {
    const [echo] = await pin(upstreams, 'fx', ['echo']);
    expect(() => registerRun(broker, 'bad-2', [echo!, echo!], upstreams)).toThrow(/pinned twice/);
    expect(() => registerRun(broker, 'run-a', [echo!], upstreams)).toThrow(/already registered/);
    expect(() => registerRun(broker, 'bad/3', [echo!], upstreams)).toThrow(/run id/);
    expect(() => registerRun(broker, 'bad-4', [{ ...echo!, inputSchema: { type: 'object', properties: {} } }], upstreams)).toThrow(/does not match its pinned hash/);
  });
});
