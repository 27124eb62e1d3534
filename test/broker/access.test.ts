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
  it('serves a pinned tool to a client holding the run capability', async () => {
    const client = await connectClient(runA.registration.url, runA.registration.capability);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(['approve', 'fx_echo']);
    expect(textOf(await client.callTool({ name: 'fx_echo', arguments: { text: 'hello' } }))).toBe('hello');
    await client.close();
  });

  it('mints a 32-byte base64url capability and keeps it out of the URL', () => {
    expect(runA.registration.capability).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(runA.registration.capability, 'base64url')).toHaveLength(32);
    expect(runA.registration.url).toBe(`http://127.0.0.1:${broker.port}/runs/run-a/mcp`);
    expect(runA.registration.url).not.toContain(runA.registration.capability);
    expect(runA.registration.capability).not.toBe(runB.registration.capability);
  });

  it('answers 401 without an Authorization header', async () => {
    expect((await raw(runA.registration.url, {})).status).toBe(401);
    await expect(connectClient(runA.registration.url)).rejects.toThrow(/401|capability|Unauthorized/i);
  });

  it('answers 401 to a wrong capability', async () => {
    const wrong = Buffer.alloc(32, 7).toString('base64url');
    expect((await raw(runA.registration.url, { authorization: `Bearer ${wrong}` })).status).toBe(401);
    expect((await raw(runA.registration.url, { authorization: `Bearer ${runA.registration.capability}x` })).status).toBe(401);
    expect((await raw(runA.registration.url, { authorization: runA.registration.capability })).status).toBe(401);
  });

  it("refuses run A's capability on run B's URL", async () => {
    expect((await raw(runB.registration.url, { authorization: `Bearer ${runA.registration.capability}` })).status).toBe(401);
    expect((await raw(runB.registration.url, { authorization: `Bearer ${runB.registration.capability}` })).status).toBe(200);
  });

  it('answers 403 to a non-loopback Host header even with the right capability', async () => {
    const reply = await raw(runA.registration.url, { host: 'evil.example', authorization: `Bearer ${runA.registration.capability}` });
    expect(reply.status).toBe(403);
    expect(reply.body).toContain('Host');
    const wrongPort = await raw(runA.registration.url, { host: `127.0.0.1:${broker.port + 1}`, authorization: `Bearer ${runA.registration.capability}` });
    expect(wrongPort.status).toBe(403);
    const localhost = await raw(runA.registration.url, { host: `localhost:${broker.port}`, authorization: `Bearer ${runA.registration.capability}` });
    expect(localhost.status).toBe(200);
  });

  it('answers 403 to any Origin header, so no browser page can call it', async () => {
    for (const origin of ['https://evil.example', `http://127.0.0.1:${broker.port}`, 'null']) {
      const reply = await raw(runA.registration.url, { origin, authorization: `Bearer ${runA.registration.capability}` });
      expect(reply.status).toBe(403);
    }
  });

  it('answers 413 to a body over the bound before parsing it', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { pad: 'x'.repeat(70 * 1024) } });
    const reply = await raw(runA.registration.url, { authorization: `Bearer ${runA.registration.capability}` }, body);
    expect(reply.status).toBe(413);
  });

  it('answers 404 to paths that name no run', async () => {
    expect((await raw(`http://127.0.0.1:${broker.port}/runs/nope/mcp`, { authorization: `Bearer ${runA.registration.capability}` })).status).toBe(404);
    expect((await raw(`http://127.0.0.1:${broker.port}/mcp`, { authorization: `Bearer ${runA.registration.capability}` })).status).toBe(404);
  });

  it('refuses a call after the run ended, on an open session and on a new one', async () => {
    const run = registerRun(broker, 'run-ended', await pin(upstreams, 'fx', ['echo']), upstreams);
    const client = await connectClient(run.registration.url, run.registration.capability);
    await run.registration.close();
    await expect(client.callTool({ name: 'fx_echo', arguments: { text: 'late' } })).rejects.toThrow();
    expect((await raw(run.registration.url, { authorization: `Bearer ${run.registration.capability}` })).status).toBe(404);
    expect(run.events).toEqual([]);
    await client.close().catch(() => undefined);
  });

  it('bounds the MCP sessions one run may open', async () => {
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

  it('gives a run registered again after it ended a fresh capability, and the old one stops working', async () => {
    const tools = await pin(upstreams, 'fx', ['echo']);
    const first = registerRun(broker, 'run-again', tools, upstreams);
    await first.registration.close();
    const second = registerRun(broker, 'run-again', tools, upstreams);
    expect(second.registration.capability).not.toBe(first.registration.capability);
    expect((await raw(second.registration.url, { authorization: `Bearer ${first.registration.capability}` })).status).toBe(401);
    expect((await raw(second.registration.url, { authorization: `Bearer ${second.registration.capability}` })).status).toBe(200);
    await second.registration.close();
  });

  it('refuses to register a binding with a reserved, duplicate or tampered tool', async () => {
    const [echo] = await pin(upstreams, 'fx', ['echo']);
    expect(() => registerRun(broker, 'bad-1', [{ ...echo!, exposedName: 'approve' }], upstreams)).toThrow(/reserved/);
    expect(() => registerRun(broker, 'bad-2', [echo!, echo!], upstreams)).toThrow(/pinned twice/);
    expect(() => registerRun(broker, 'run-a', [echo!], upstreams)).toThrow(/already registered/);
    expect(() => registerRun(broker, 'bad/3', [echo!], upstreams)).toThrow(/run id/);
    expect(() => registerRun(broker, 'bad-4', [{ ...echo!, inputSchema: { type: 'object', properties: {} } }], upstreams)).toThrow(/does not match its pinned hash/);
  });
});
