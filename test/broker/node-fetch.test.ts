/** The fetch upstream MCP clients use (node:http/https): TLS verification, redirects, aborts and bodies as fetch has them. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyUpstreamError } from '../../main/upstreams/failure.js';
import { createNodeFetch, nodeFetch } from '../../main/upstreams/node-fetch.js';
import { openUpstreams } from '../../main/upstreams/upstreams.js';
import { startHttpFixture } from '../fixtures/mcp-servers/http.js';

const dir = mkdtempSync(join(tmpdir(), 'ward-node-fetch-'));
const keyFile = join(dir, 'key.pem');
const certFile = join(dir, 'cert.pem');

/** A plain server whose answers each test picks by path. */
let plain: Server;
let plainUrl: string;

beforeAll(async () => {
  // A throwaway self-signed certificate for 127.0.0.1, made fresh for this run.
  const made = spawnSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '2', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`openssl could not make a test certificate: ${made.stderr}`);
  plain = createServer((req, res) => {
    if (req.url === '/redirect') res.writeHead(302, { location: 'http://elsewhere.invalid/mcp' }).end();
    else if (req.url === '/empty') res.writeHead(204).end();
    else if (req.url === '/stall') res.writeHead(200, { 'content-type': 'text/event-stream' }).write('event: message\n');
    // Anything else is never answered: the caller's signal is the only way out.
  });
  await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
  plainUrl = `http://127.0.0.1:${(plain.address() as AddressInfo).port}`;
});

afterAll(async () => {
  plain.closeAllConnections();
  await new Promise((resolve) => plain.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

describe('upstream fetch', () => {
  it('refuses an https upstream whose certificate is not trusted: unreachable, and no request reaches it', async () => {
    const fixture = await startHttpFixture({ tls: { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8') } });
    const upstreams = await openUpstreams({ fx: { type: 'http', url: fixture.url } });
    await expect(upstreams.listTools('fx')).rejects.toMatchObject({ code: 'unreachable' });
    expect(fixture.calls.size).toBe(0);
    await upstreams.close();
    await fixture.close();
  });

  it('calls an https upstream whose certificate the system trusts', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'test/fixtures/https-upstream-call.ts', keyFile, certFile], {
      encoding: 'utf8',
      env: { ...process.env, NODE_EXTRA_CA_CERTS: certFile },
      timeout: 30_000,
    });
    expect(run.stderr).toBe('');
    const { url, outcome } = JSON.parse(run.stdout) as { url: string; outcome: unknown };
    expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(outcome).toEqual({ ok: true, content: [{ type: 'text', text: 'over tls' }], isError: false, bytes: 8 });
  });

  it('hands a redirect back instead of following it (the SDK follows within the origin itself)', async () => {
    const response = await nodeFetch(`${plainUrl}/redirect`, { method: 'POST', body: '{}', redirect: 'manual' });
    expect([response.status, response.headers.get('location')]).toEqual([302, 'http://elsewhere.invalid/mcp']);
  });

  it('gives a 204 no body, and refuses a request body that is neither text nor bytes', async () => {
    expect((await nodeFetch(`${plainUrl}/empty`)).body).toBeNull();
    await expect(nodeFetch(`${plainUrl}/empty`, { method: 'POST', body: new FormData() })).rejects.toThrow('an upstream request body must be a string or bytes');
  });

  it("rejects with the signal's reason, before the answer and while reading its body", async () => {
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

  it('reports a refused connection the way fetch does', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const failure = await nodeFetch(`http://127.0.0.1:${port}/`).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TypeError);
    expect(failure).toMatchObject({ message: 'fetch failed', cause: { code: 'ECONNREFUSED' } });
  });

  it('gives up on a connection whose TLS handshake never completes, as unreachable', async () => {
    // Accepts TCP, then never speaks: a half-dead host or a port that is not TLS.
    const held: Socket[] = [];
    const silent = createTcpServer((socket) => held.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    const failure = await createNodeFetch(200)(`https://127.0.0.1:${port}/mcp`, { method: 'POST', body: '{}' }).catch((error: unknown) => error);
    expect(failure).toMatchObject({ message: 'fetch failed', cause: { code: 'ETIMEDOUT' } });
    expect(classifyUpstreamError(failure)).toBe('unreachable');
    for (const socket of held) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });
});
