import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpFixture } from '../fixtures/mcp-servers/http.js';
import { startSessionServer } from '../fixtures/mcp-oauth/session-server.js';
import { deadPort, startHangingServer } from '../fixtures/oidc/provider.js';
import { harness, signal } from './support.js';

const closers: Array<() => Promise<void>> = [];

async function failureOf(promise: Promise<unknown>): Promise<Error & { code: string }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { code: string };
  }
  throw new Error('expected a failure');
}
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function htmlServer(): Promise<string> {
  const server = http.createServer((_req, res) => void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>login page</html>'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

describe('remote connections with sessions', () => {
  it('uses one session for discovery and calls, and ends it with DELETE when the connection closes', async () => {
    const fixture = await startSessionServer();
    closers.push(() => fixture.close());
    const h = harness();
    await h.manager.add({ transport: 'http', name: 'stateful', url: fixture.url });
    await h.manager.discover('stateful');
    const echo = h.manager.routes().find((r) => r.exposedName === 'stateful__echo')!;
    expect(await h.manager.caller.callTool(echo, { text: 'over sse' }, signal())).toMatchObject({ ok: true, content: [{ type: 'text', text: 'over sse' }] });
    expect(fixture.opened).toHaveLength(1);
    await h.manager.disconnect('stateful');
    expect(fixture.deleted).toEqual(fixture.opened);
  });
});

describe('remote connections that fail', () => {
  it('a server nobody listens on is unreachable', async () => {
    const h = harness();
    await h.manager.add({ transport: 'http', name: 'gone', url: `http://127.0.0.1:${await deadPort()}/mcp` });
    await expect(h.manager.discover('gone')).rejects.toMatchObject({ code: 'unreachable' });
    expect(h.manager.get('gone')).toMatchObject({ health: 'error', lastErrorCode: 'unreachable' });
  });

  it('a server that accepts and never answers times out within the connect bound', async () => {
    const hanging = await startHangingServer();
    closers.push(() => hanging.close());
    const h = harness({ limits: { connectTimeoutMs: 500 } });
    await h.manager.add({ transport: 'http', name: 'stuck', url: `${hanging.url}/mcp` });
    await expect(h.manager.discover('stuck')).rejects.toMatchObject({ code: 'timed_out' });
  });

  it('a web page instead of MCP is a protocol error, and its body is not passed on', async () => {
    const h = harness();
    await h.manager.add({ transport: 'http', name: 'page', url: await htmlServer() });
    const failure = await failureOf(h.manager.discover('page'));
    expect(failure).toMatchObject({ code: 'protocol_error' });
    expect(failure.message).not.toContain('login page');
  });

  it('a server that rejects requests without asking for sign-in asks to sign in (never passing its body on)', async () => {
    const fixture = await startHttpFixture({ token: 'static-token-the-connection-does-not-have' });
    closers.push(() => fixture.close());
    const h = harness();
    await h.manager.add({ transport: 'http', name: 'locked', url: fixture.url });
    const failure = await failureOf(h.manager.discover('locked'));
    expect(failure.code).toBe('not_signed_in');
    expect(failure.message).not.toContain('must not be forwarded');
  });

  it('a result over 1 MiB from an HTTP server is too_large, and the connection keeps working', async () => {
    const fixture = await startHttpFixture();
    closers.push(() => fixture.close());
    const h = harness();
    await h.manager.add({ transport: 'http', name: 'bulky', url: fixture.url });
    await h.manager.discover('bulky');
    const route = (name: string) => h.manager.routes().find((r) => r.exposedName === `bulky__${name}`)!;
    expect(await h.manager.caller.callTool(route('huge'), { bytes: 1024 * 1024 + 1 }, signal())).toMatchObject({ ok: false, errorCode: 'too_large' });
    expect(await h.manager.caller.callTool(route('echo'), { text: 'ok' }, signal())).toMatchObject({ ok: true });
    expect(h.manager.get('bulky')).toMatchObject({ health: 'ok' });
  });
});
