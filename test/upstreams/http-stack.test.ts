/**
 * The HTTP stacks upstream MCP clients use: node:http for plain http to a loopback name, global
 * fetch for everything else (main/upstreams/http-stack.ts). TLS verification, redirects, aborts
 * and bodies as fetch has them.
 */
import { execFile, spawnSync } from 'node:child_process';
import { getEventListeners } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyUpstreamError } from '../../main/upstreams/errors.js';
import { upstreamFetch, usesNodeHttp } from '../../main/upstreams/http-stack.js';
import { nodeFetch } from '../../main/upstreams/node-fetch.js';
import { openUpstreams } from '../../main/upstreams/upstreams.js';
import { startHttpFixture } from '../fixtures/mcp-servers/http.js';

const dir = mkdtempSync(join(tmpdir(), 'ward-node-fetch-'));
const keyFile = join(dir, 'key.pem');
const certFile = join(dir, 'cert.pem');

/** A plain server whose answers each test picks by path, on 127.0.0.1 and on 127.0.0.2 (this machine, but not a loopback name to Ward). */
let plain: Server;
let plainUrl: string;
let other: Server;
let otherUrl: string;

beforeAll(async () => {
  // A throwaway self-signed certificate for 127.0.0.1, made fresh for this run.
  const made = spawnSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '2', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`openssl could not make a test certificate: ${made.stderr}`);
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    if (req.url === '/redirect') res.writeHead(302, { location: 'http://elsewhere.invalid/mcp' }).end();
    else if (req.url === '/empty') res.writeHead(204).end();
    else if (req.url === '/stall') res.writeHead(200, { 'content-type': 'text/event-stream' }).write('event: message\n');
    else if (req.url === '/stack') res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`data: ${req.headers['sec-fetch-mode'] === undefined ? 'node:http' : 'fetch'}\n\n`);
    // Anything else is never answered: the caller's signal is the only way out.
  };
  plain = createServer(handler);
  other = createServer(handler);
  // Idle keep-alive sockets stay open until afterAll. With the server's 5 s timeout, an event loop
  // that stood still longer (the https test's spawnSync on a loaded machine) let the overdue timer
  // close the pooled socket just handed to the next request: ECONNRESET in the redirect test.
  for (const server of [plain, other]) server.keepAliveTimeout = 0;
  await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.2', resolve));
  plainUrl = `http://127.0.0.1:${(plain.address() as AddressInfo).port}`;
  otherUrl = `http://127.0.0.2:${(other.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const server of [plain, other]) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('which stack carries a request', () => {
  it('test_takes_node_http_for_plain_http_to_a_loopback_name_only_https_and_any_other_host_go_through_fetch', async () => {
    expect(['http://127.0.0.1:9/mcp', 'http://localhost:9/mcp', 'http://[::1]:9/mcp'].map((url) => usesNodeHttp(new URL(url)))).toEqual([true, true, true]);
    expect(['https://127.0.0.1:9/mcp', 'https://mcp.example.com/mcp', 'http://mcp.example.com/mcp', 'http://127.0.0.2:9/mcp'].map((url) => usesNodeHttp(new URL(url)))).toEqual([
      false,
      false,
      false,
      false,
    ]);
    // What the servers saw: fetch (undici) marks every request with Sec-Fetch-Mode, node:http does not.
    expect(await (await upstreamFetch(`${plainUrl}/stack`)).text()).toBe('data: node:http\n\n');
    expect(await (await upstreamFetch(`${otherUrl}/stack`)).text()).toBe('data: fetch\n\n');
  });

  it("test_sends_a_loopback_http_upstreams_mcp_traffic_over_node_http", async () => {
    const fixture = await startHttpFixture({ sse: true });
    const upstreams = await openUpstreams({ fx: { type: 'http', url: fixture.url } });
    expect((await upstreams.listTools('fx')).map((tool) => tool.name)).toContain('echo');
    await upstreams.close();
    await fixture.close();
    expect(fixture.stacks.length).toBeGreaterThan(0);
    expect(new Set(fixture.stacks)).toEqual(new Set(['node:http']));
  });

  it("test_lets_go_of_the_callers_signal_on_the_fetch_path_once_a_body_is_read_yet_still_aborts_an_in_flight_request_with_it", async () => {
    // undici would otherwise hold one listener on the transport's lifetime signal per request until GC.
    const lifetime = new AbortController();
    for (let i = 0; i < 20; i++) expect(await (await upstreamFetch(`${otherUrl}/stack`, { signal: lifetime.signal })).text()).toBe('data: fetch\n\n');
    expect(getEventListeners(lifetime.signal, 'abort')).toHaveLength(0);
    const stalled = await upstreamFetch(`${otherUrl}/stall`, { signal: lifetime.signal });
    const reading = stalled.text();
    setTimeout(() => lifetime.abort(new Error('connection closed')), 50);
    await expect(reading).rejects.toThrow('connection closed');
    expect(getEventListeners(lifetime.signal, 'abort')).toHaveLength(0);
  });
});

describe('upstream fetch', () => {
  it('test_refuses_an_https_upstream_whose_certificate_is_not_trusted_unreachable_and_no_request_reaches_it', async () => {
    const fixture = await startHttpFixture({ tls: { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8') } });
    const upstreams = await openUpstreams({ fx: { type: 'http', url: fixture.url } });
    await expect(upstreams.listTools('fx')).rejects.toMatchObject({ code: 'unreachable' });
    expect(fixture.calls.size).toBe(0);
    await upstreams.close();
    await fixture.close();
  });

  it('test_calls_an_https_upstream_whose_certificate_the_system_trusts', { timeout: 40_000 }, async () => {
    // Not spawnSync: a blocked event loop would leave this file's servers and sockets frozen meanwhile.
    const run = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
      execFile(process.execPath, ['--import', 'tsx', 'test/fixtures/https-upstream-call.ts', keyFile, certFile], { encoding: 'utf8', env: { ...process.env, NODE_EXTRA_CA_CERTS: certFile }, timeout: 30_000 }, (error, stdout, stderr) =>
        error === null ? resolve({ stdout, stderr }) : reject(new Error(`the https call fixture failed: ${stderr}`, { cause: error })),
      );
    });
    expect(run.stderr).toBe('');
    const { url, outcome, stacks } = JSON.parse(run.stdout) as { url: string; outcome: unknown; stacks: string[] };
    expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/mcp$/);
    // https goes through fetch, the stack sign-in and OAuth use, even to this machine.
    expect(stacks.length).toBeGreaterThan(0);
    expect(new Set(stacks)).toEqual(new Set(['fetch']));
    expect(outcome).toEqual({ ok: true, content: [{ type: 'text', text: 'over tls' }], isError: false, bytes: 8 });
  });

  it('test_hands_a_redirect_back_instead_of_following_it_the_sdk_follows_within_the_origin_itself', async () => {
    const response = await nodeFetch(`${plainUrl}/redirect`, { method: 'POST', body: '{}', redirect: 'manual' });
    expect([response.status, response.headers.get('location')]).toEqual([302, 'http://elsewhere.invalid/mcp']);
  });

  it('test_gives_a_204_no_body_and_refuses_a_request_body_that_is_neither_text_nor_bytes', async () => {
    expect((await nodeFetch(`${plainUrl}/empty`)).body).toBeNull();
    await expect(nodeFetch(`${plainUrl}/empty`, { method: 'POST', body: new FormData() })).rejects.toThrow('an upstream request body must be a string or bytes');
  });

  it("test_rejects_with_the_signals_reason_before_the_answer_and_while_reading_its_body", async () => {
    const early = new AbortController();
    const waiting = nodeFetch(`${plainUrl}/silent`, { signal: early.signal });
    setTimeout(() => early.abort(new Error('gave up waiting')), 20);
    await expect(waiting).rejects.toThrow('gave up waiting');

    const late = new AbortController();
    const response = await nodeFetch(`${plainUrl}/stall`, { signal: late.signal });
    const reading = response.text();
    setTimeout(() => late.abort(new Error('gave up reading')), 20);
    await expect(reading).rejects.toThrow('gave up reading');
  });

  it('test_reports_a_refused_connection_the_way_fetch_does', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const failure = await nodeFetch(`http://127.0.0.1:${port}/`).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TypeError);
    expect(failure).toMatchObject({ message: 'fetch failed', cause: { code: 'ECONNREFUSED' } });
  });

  it("test_gives_up_on_a_connection_whose_tls_handshake_never_completes_as_unreachable_fetchs_10_s_connect_bound", { timeout: 30_000 }, async () => {
    // Accepts TCP, then never speaks: a half-dead host or a port that is not TLS.
    const held: Socket[] = [];
    const silent = createTcpServer((socket) => held.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    const failure = await upstreamFetch(`https://127.0.0.1:${port}/mcp`, { method: 'POST', body: '{}' }).catch((error: unknown) => error);
    expect(failure).toMatchObject({ message: 'fetch failed', cause: { code: 'UND_ERR_CONNECT_TIMEOUT' } });
    expect(classifyUpstreamError(failure).code).toBe('unreachable');
    for (const socket of held) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });
});
