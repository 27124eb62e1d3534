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

type StreamEnding = 'without_an_event_id' | 'with_an_event_id_whose_resumption_is_refused';

/**
 * A Streamable HTTP MCP server written by hand, since the SDK's server cannot misbehave this way:
 * it answers with JSON, except a call of `vanish`, answered on an SSE stream that ends without
 * the answer. A GET (the standalone stream, or a resumption) gets 405. Records every tool call
 * POSTed and every Last-Event-ID a GET names.
 */
async function vanishingAnswerServer(ending: StreamEnding): Promise<{ url: string; called: string[]; resumedFrom: string[] }> {
  const called: string[] = [];
  const resumedFrom: string[] = [];
  const tools = [
    { name: 'vanish', description: 'Its answer never comes', inputSchema: { type: 'object', properties: {} } },
    { name: 'echo', description: 'Echoes text', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } },
  ];
  const server = http.createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      if (req.method !== 'POST') {
        if (typeof req.headers['last-event-id'] === 'string') resumedFrom.push(req.headers['last-event-id']);
        return void res.writeHead(405).end();
      }
      const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: number; method: string; params?: { name?: string; protocolVersion?: string; arguments?: { text?: string } } };
      if (message.id === undefined) return void res.writeHead(202).end();
      const answer = (result: unknown): void => void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
      // A 2025 server: the 2026-07-28 probe is a method it does not know.
      if (message.method === 'server/discover') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'Method not found' } }));
      if (message.method === 'initialize') return answer({ protocolVersion: message.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'vanishing', version: '1' } });
      if (message.method === 'tools/list') return answer({ tools });
      called.push(message.params?.name ?? '');
      if (message.params?.name === 'echo') return answer({ content: [{ type: 'text', text: message.params.arguments?.text ?? '' }] });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (ending === 'without_an_event_id') res.end(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'working' } })}\n\n`);
      else res.end('id: answer-1\nretry: 50\ndata: \n\n');
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  }));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, called, resumedFrom };
}

describe('remote connections with sessions', () => {
  it('test_uses_one_session_for_discovery_and_calls_and_ends_it_with_delete_when_the_connection_closes', async () => {
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

  it('test_a_call_whose_stream_the_server_closes_after_its_priming_event_resumes_with_last_event_id_and_gets_its_answer', async () => {
    const fixture = await startSessionServer({ resumable: true, retryMs: 200 });
    closers.push(() => fixture.close());
    // Without resumption the call would wait for this bound and time out.
    const h = harness({ limits: { callTimeoutMs: 8_000 } });
    await h.manager.add({ transport: 'http', name: 'polling', url: fixture.url });
    await h.manager.discover('polling');
    const drop = h.manager.routes().find((r) => r.exposedName === 'polling__drop')!;
    expect(await h.manager.caller.callTool(drop, {}, signal())).toMatchObject({ ok: true, content: [{ type: 'text', text: 'resumed' }] });
    // The answer came on a GET that named the last event seen: the call itself was sent once (B6).
    expect(fixture.resumedFrom.filter((id) => id !== null)).toHaveLength(1);
  });
});

describe('remote calls whose answer stream ends without the answer', () => {
  // The call bound is above the test's own 30 s: before the fix these calls waited for it (15 min in Ward).
  it.each(['without_an_event_id', 'with_an_event_id_whose_resumption_is_refused'] as const)(
    'test_a_call_whose_answer_stream_ends_%s_fails_at_once_as_answer_lost_sent_once_and_the_next_call_works',
    { timeout: 30_000 },
    async (ending) => {
      const fixture = await vanishingAnswerServer(ending);
      const h = harness({ limits: { callTimeoutMs: 60_000 } });
      await h.manager.add({ transport: 'http', name: 'vanishing', url: fixture.url });
      await h.manager.discover('vanishing');
      const route = (name: string) => h.manager.routes().find((r) => r.exposedName === `vanishing__${name}`)!;
      const lost = await h.manager.caller.callTool(route('vanish'), {}, signal());
      expect(lost).toMatchObject({ ok: false, errorCode: 'answer_lost' });
      expect(lost.ok ? '' : lost.message).toContain('ended its answer stream for tools/call without a result');
      expect(fixture.resumedFrom).toEqual(ending === 'without_an_event_id' ? [] : ['answer-1']);
      expect(await h.manager.caller.callTool(route('echo'), { text: 'next' }, signal())).toMatchObject({ ok: true, content: [{ type: 'text', text: 'next' }] });
      // Exactly one attempt each (B6): the lost call was not sent again.
      expect(fixture.called).toEqual(['vanish', 'echo']);
    },
  );
});

describe('remote connections that fail', () => {
  it('test_a_server_nobody_listens_on_is_unreachable', async () => {
    const h = harness();
    await h.manager.add({ transport: 'http', name: 'gone', url: `http://127.0.0.1:${await deadPort()}/mcp` });
    await expect(h.manager.discover('gone')).rejects.toMatchObject({ code: 'unreachable' });
    expect(h.manager.get('gone')).toMatchObject({ health: 'error', lastErrorCode: 'unreachable' });
  });

  it('test_a_server_that_accepts_and_never_answers_times_out_within_the_connect_bound', async () => {
    const hanging = await startHangingServer();
    closers.push(() => hanging.close());
    const h = harness({ limits: { connectTimeoutMs: 500 } });
    await h.manager.add({ transport: 'http', name: 'stuck', url: `${hanging.url}/mcp` });
    await expect(h.manager.discover('stuck')).rejects.toMatchObject({ code: 'timed_out' });
  });

  it('test_a_web_page_instead_of_mcp_is_a_protocol_error_and_its_body_is_not_passed_on', async () => {
    const h = harness();
    await h.manager.add({ transport: 'http', name: 'page', url: await htmlServer() });
    const failure = await failureOf(h.manager.discover('page'));
    expect(failure).toMatchObject({ code: 'protocol_error' });
    expect(failure.message).not.toContain('login page');
  });

  it('test_a_server_that_rejects_requests_without_asking_for_sign_in_asks_to_sign_in_never_passing_its_body_on', async () => {
    const fixture = await startHttpFixture({ token: 'static-token-the-connection-does-not-have' });
    closers.push(() => fixture.close());
    const h = harness();
    await h.manager.add({ transport: 'http', name: 'locked', url: fixture.url });
    const failure = await failureOf(h.manager.discover('locked'));
    expect(failure.code).toBe('not_signed_in');
    expect(failure.message).not.toContain('must not be forwarded');
  });

  it('test_a_result_over_1_mib_from_an_http_server_is_too_large_and_the_connection_keeps_working', async () => {
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
