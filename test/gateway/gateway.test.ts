/** G1–G4: the model gateway in front of the real scripted provider (a Messages-API server on loopback). */
import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { ModelGateway, type GatewayExchange } from '../../main/gateway/gateway.js';
import type { ProviderCredential } from '../../main/providers/provider-headers.js';
import { startModelProvider, type ModelProvider } from '../fixtures/model-provider/provider.js';

import { MESSAGE, post, streamedText } from './support.js';
import { until } from '../support/wait.js';

const REAL_KEY = 'sk-ant-gateway-canary-4b1d7c9e2f3a';
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(credential: ProviderCredential = { kind: 'api-key', value: REAL_KEY }, provider?: ModelProvider) {
  const upstream = provider ?? (await startModelProvider([{ blocks: [{ type: 'text', text: 'Hello through the gateway.' }], usage: { input_tokens: 17, output_tokens: 9 } }]));
  if (provider === undefined) cleanups.push(() => upstream.close());
  const gateway = await ModelGateway.start();
  cleanups.push(() => gateway.close());
  const exchanges: GatewayExchange[] = [];
  const route = gateway.register({ runId: 'run-a', baseUrl: upstream.url, credential: async () => credential, onExchange: (exchange) => exchanges.push(exchange) });
  return { upstream, gateway, route, exchanges };
}

describe('model gateway (G1, G2)', () => {
  it('test_g2_forwards_a_streamed_answer_with_the_real_key_which_the_child_never_holds', async () => {
    const { upstream, route, exchanges } = await setup();
    const reply = await post(`${route.url}/v1/messages?beta=true`, { 'x-api-key': route.capability, 'anthropic-version': '2023-06-01' }, MESSAGE);
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toContain('text/event-stream');
    expect(streamedText(reply.body)).toBe('Hello through the gateway.');
    expect(reply.body).toContain('event: message_stop');
    const [seen] = upstream.conversationRequests();
    expect(seen!.path).toBe('/v1/messages');
    expect(seen!.headers['x-api-key']).toBe(REAL_KEY);
    expect(seen!.headers['anthropic-version']).toBe('2023-06-01');
    // The capability never leaves Ward for the provider.
    expect(JSON.stringify(upstream.requests)).not.toContain(route.capability);
    expect(exchanges).toEqual([{ path: '/v1/messages', model: 'claude-sonnet-4-5', status: 200, durationMs: expect.any(Number), problem: null, usage: { inputTokens: 17, outputTokens: 9, cacheReadTokens: 0, cacheCreationTokens: 0 } }]);
  });

  it('test_a_subscription_token_goes_as_a_bearer_and_never_as_an_api_key', async () => {
    const { upstream, route } = await setup({ kind: 'oauth-token', value: 'oauth-canary-91c3' });
    const reply = await post(`${route.url}/v1/messages`, { authorization: `Bearer ${route.capability}` }, MESSAGE);
    expect(reply.status).toBe(200);
    const [seen] = upstream.conversationRequests();
    expect(seen!.headers.authorization).toBe('Bearer oauth-canary-91c3');
    expect(seen!.headers['x-api-key']).toBeUndefined();
  });

  it('test_many_calls_over_one_kept_alive_connection_leave_nothing_behind_on_it', async () => {
    const upstream = await startModelProvider();
    const { route } = await setup(undefined, upstream);
    cleanups.push(() => upstream.close());
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    cleanups.push(() => void process.off('warning', onWarning));
    // As the CLI does in a warm session: one connection, a model call per step of a long tool loop.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    cleanups.push(() => agent.destroy());
    const sockets = new Set<unknown>();
    for (let call = 0; call < 15; call++) {
      upstream.push({ blocks: [{ type: 'text', text: `Answer ${call}.` }] });
      const reply = await new Promise<string>((resolve, reject) => {
        const request = http.request(`${route.url}/v1/messages`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'x-api-key': route.capability } }, (response) => {
          let text = '';
          response.on('data', (chunk) => (text += chunk));
          response.on('end', () => resolve(text));
        });
        request.on('socket', (socket) => sockets.add(socket));
        request.on('error', reject);
        request.end(MESSAGE);
      });
      expect(streamedText(reply)).toBe(`Answer ${call}.`);
    }
    expect(sockets.size).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    // Each call used to leave a listener on the connection, holding its body and the key: Node warned at the 11th.
    expect(warnings.map((warning) => warning.name)).not.toContain('MaxListenersExceededWarning');

    // A later call on that connection still ends at the provider when the CLI goes away before any answer.
    upstream.push({ kind: 'silent' });
    const waiting = http.request(`${route.url}/v1/messages`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'x-api-key': route.capability } });
    waiting.on('error', () => undefined);
    waiting.end(MESSAGE);
    await until(() => upstream.openAnswers() === 1, 'the provider to get the call');
    waiting.destroy();
    await until(() => upstream.openAnswers() === 0, 'the provider call to be abandoned with the CLI’s connection');
  });

  it('test_count_tokens_is_forwarded_and_other_paths_and_methods_are_refused', async () => {
    const { route } = await setup();
    const auth = { 'x-api-key': route.capability };
    expect((await post(`${route.url}/v1/messages/count_tokens`, auth, JSON.stringify({ model: 'x', messages: [] }))).status).toBe(200);
    expect((await post(`${route.url}/v1/models`, auth, '')).status).toBe(404);
    expect((await post(`${route.url}/../v1/messages`, auth, MESSAGE)).status).toBe(404);
    expect((await post(`${route.url}/v1/messages`, auth, '', 'GET')).status).toBe(405);
  });

  it('test_a_request_carrying_tool_results_waits_for_toolcallsfinished_with_their_ids_and_a_failing_one_does_not_stop_it', async () => {
    const upstream = await startModelProvider();
    cleanups.push(() => upstream.close());
    const gateway = await ModelGateway.start();
    cleanups.push(() => gateway.close());
    const finished: string[][] = [];
    let release = () => {};
    const route = gateway.register({
      runId: 'run-t',
      baseUrl: upstream.url,
      credential: async () => ({ kind: 'api-key', value: REAL_KEY }),
      onExchange: () => undefined,
      toolCallsFinished: (ids) => {
        finished.push([...ids]);
        // The second call's capture fails: the request goes on all the same.
        return finished.length === 1 ? new Promise<void>((resolve) => (release = resolve)) : Promise.reject(new Error('scan failed'));
      },
    });
    const auth = { 'x-api-key': route.capability };
    const results = (ids: string[], role = 'user') => ({
      model: 'claude-sonnet-4-5',
      max_tokens: 100,
      messages: [
        { role: 'user', content: 'go' },
        { role, content: [...ids.map((id) => ({ type: 'tool_result', tool_use_id: id, content: 'ok' })), { type: 'text', text: 'a note' }] },
      ],
    });
    // No tool results in the last message, an assistant's last message, count_tokens: not a finished call.
    await post(`${route.url}/v1/messages`, auth, MESSAGE);
    await post(`${route.url}/v1/messages`, auth, JSON.stringify(results(['x'], 'assistant')));
    await post(`${route.url}/v1/messages/count_tokens`, auth, JSON.stringify(results(['y'])));
    expect(upstream.requests).toHaveLength(3);
    expect(finished).toEqual([]);

    const seen = upstream.requests.length;
    const held = post(`${route.url}/v1/messages`, auth, JSON.stringify(results(['toolu_a', 'toolu_b'])));
    await until(() => finished.length === 1, 'the capture of the finished calls');
    // Held until the capture is done: the provider has not seen the request yet.
    expect(upstream.requests).toHaveLength(seen);
    release();
    await held;
    expect(upstream.requests).toHaveLength(seen + 1);
    expect(finished).toEqual([['toolu_a', 'toolu_b']]);
    await post(`${route.url}/v1/messages`, auth, JSON.stringify(results(['toolu_c'])));
    expect(upstream.requests).toHaveLength(seen + 2);
    expect(finished).toEqual([['toolu_a', 'toolu_b'], ['toolu_c']]);
  });

  it('test_a_model_the_admin_policy_does_not_allow_is_refused_before_the_provider_sees_it', async () => {
    const upstream = await startModelProvider([{ blocks: [{ type: 'text', text: 'ok' }] }]);
    cleanups.push(() => upstream.close());
    const gateway = await ModelGateway.start();
    cleanups.push(() => gateway.close());
    const route = gateway.register({
      runId: 'run-m',
      baseUrl: upstream.url,
      credential: async () => ({ kind: 'api-key', value: REAL_KEY }),
      onExchange: () => undefined,
      modelRefusal: (model) => (model.startsWith('claude-sonnet-') ? null : `model ${model} is not allowed by Example IT`),
    });
    const auth = { 'x-api-key': route.capability };
    const refused = await post(`${route.url}/v1/messages`, auth, JSON.stringify({ model: 'claude-opus-4', max_tokens: 10, messages: [] }));
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body)).toEqual({ type: 'error', error: { type: 'permission_error', message: 'Ward: model claude-opus-4 is not allowed by Example IT' } });
    expect(upstream.requests).toHaveLength(0);
    expect((await post(`${route.url}/v1/messages`, auth, MESSAGE)).status).toBe(200);
  });

  it('test_g1_a_wrong_missing_foreign_or_dead_capability_gets_401_or_404', async () => {
    const { gateway, route, upstream } = await setup();
    const other = gateway.register({ runId: 'run-b', baseUrl: upstream.url, credential: async () => ({ kind: 'api-key', value: REAL_KEY }), onExchange: () => undefined });
    expect((await post(`${route.url}/v1/messages`, {}, MESSAGE)).status).toBe(401);
    expect((await post(`${route.url}/v1/messages`, { 'x-api-key': 'x'.repeat(43) }, MESSAGE)).status).toBe(401);
    // Run B's capability does not open run A.
    expect((await post(`${route.url}/v1/messages`, { 'x-api-key': other.capability }, MESSAGE)).status).toBe(401);
    route.close();
    // Dead once the run ended.
    expect((await post(`${route.url}/v1/messages`, { 'x-api-key': route.capability }, MESSAGE)).status).toBe(404);
    expect(upstream.requests).toHaveLength(0);
  });

  it('test_g1_a_foreign_host_header_or_an_origin_is_refused_before_anything_is_read', async () => {
    const { route, upstream } = await setup();
    const auth = { 'x-api-key': route.capability };
    expect((await post(`${route.url}/v1/messages`, { ...auth, host: 'evil.example:80' }, MESSAGE)).status).toBe(403);
    expect((await post(`${route.url}/v1/messages`, { ...auth, origin: 'https://evil.example' }, MESSAGE)).status).toBe(403);
    expect(upstream.requests).toHaveLength(0);
  });

  it('test_g2_an_oversized_request_is_refused_with_413', async () => {
    const upstream = await startModelProvider();
    cleanups.push(() => upstream.close());
    const gateway = await ModelGateway.start({ maxRequestBytes: 1024 });
    cleanups.push(() => gateway.close());
    const route = gateway.register({ runId: 'run-a', baseUrl: upstream.url, credential: async () => ({ kind: 'api-key', value: REAL_KEY }), onExchange: () => undefined });
    expect((await post(`${route.url}/v1/messages`, { 'x-api-key': route.capability }, 'x'.repeat(2048))).status).toBe(413);
    expect(upstream.requests).toHaveLength(0);
  });

  it('test_the_providers_error_status_reaches_the_child_and_is_reported_without_the_key', async () => {
    const upstream = await startModelProvider([{ kind: 'http_error', status: 429, errorType: 'rate_limit_error', message: 'slow down' }]);
    cleanups.push(() => upstream.close());
    const { route, exchanges } = await setup({ kind: 'api-key', value: REAL_KEY }, upstream);
    const reply = await post(`${route.url}/v1/messages`, { 'x-api-key': route.capability }, MESSAGE);
    expect(reply.status).toBe(429);
    expect(reply.body).toContain('rate_limit_error');
    expect(reply.body).not.toContain(REAL_KEY);
    expect(exchanges[0]).toMatchObject({ status: 429, problem: null, usage: null });
  });

  it('test_an_unreachable_provider_is_a_502_in_wards_words', async () => {
    const gateway = await ModelGateway.start();
    cleanups.push(() => gateway.close());
    const exchanges: GatewayExchange[] = [];
    // A port nothing listens on.
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const route = gateway.register({ runId: 'run-a', baseUrl: `http://127.0.0.1:${port}`, credential: async () => ({ kind: 'api-key', value: REAL_KEY }), onExchange: (exchange) => exchanges.push(exchange) });
    const reply = await post(`${route.url}/v1/messages`, { 'x-api-key': route.capability }, MESSAGE);
    expect(reply.status).toBe(502);
    expect(JSON.parse(reply.body)).toEqual({ type: 'error', error: { type: 'api_error', message: 'Ward: the model provider could not be reached (ECONNREFUSED)' } });
    expect(exchanges).toEqual([{ path: '/v1/messages', model: 'claude-sonnet-4-5', status: 0, durationMs: expect.any(Number), problem: 'could not be reached (ECONNREFUSED)', usage: null }]);
  });

  it('test_g3_a_sign_in_token_is_refreshed_once_after_a_401_and_the_call_tried_once_more', async () => {
    const upstream = await startModelProvider([{ kind: 'http_error', status: 401, errorType: 'authentication_error' }, { blocks: [{ type: 'text', text: 'after refresh' }] }]);
    cleanups.push(() => upstream.close());
    const gateway = await ModelGateway.start();
    cleanups.push(() => gateway.close());
    let refreshed = 0;
    const route = gateway.register({
      runId: 'run-a',
      baseUrl: upstream.url,
      credential: async () => ({ kind: 'bearer', value: 'stale-token' }),
      refreshCredential: async () => {
        refreshed += 1;
        return { kind: 'bearer', value: 'fresh-token' };
      },
      onExchange: () => undefined,
    });
    const reply = await post(`${route.url}/v1/messages`, { 'x-api-key': route.capability }, MESSAGE);
    expect(reply.status).toBe(200);
    expect(streamedText(reply.body)).toBe('after refresh');
    expect(refreshed).toBe(1);
    expect(upstream.conversationRequests().map((request) => request.headers.authorization)).toEqual(['Bearer stale-token', 'Bearer fresh-token']);
  });
});
