/**
 * C3 at the model gateway: whatever the provider sends back — an error that echoes the key, a
 * streamed answer with the key split across chunks, a header — reaches the child with no
 * credential the gateway holds, for every kind it holds; and only the model endpoints reach the
 * provider at all.
 */
import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { ModelGateway, type GatewayExchange, type GatewayOptions, type ProviderRoute } from '../../main/gateway/gateway.js';
import type { ProviderCredential } from '../../main/providers/provider-headers.js';
import { startModelProvider, type ModelProvider, type ScriptStep } from '../fixtures/model-provider/provider.js';
import { MESSAGE, post, streamedText, type Reply } from './support.js';

const CREDENTIALS: readonly ProviderCredential[] = [
  { kind: 'api-key', value: 'sk-ant-api03-leak-canary-5d2e8f1a9b' },
  { kind: 'oauth-token', value: 'sk-ant-oat01-leak-canary-7c4b2a0e3f' },
  { kind: 'bearer', value: 'oidc-access-leak-canary-1f9e6d3c8a' },
];

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function provider(script: readonly ScriptStep[]): Promise<ModelProvider> {
  const upstream = await startModelProvider(script);
  cleanups.push(() => upstream.close());
  return upstream;
}

async function gatewayTo(baseUrl: string, route: Partial<ProviderRoute> & Pick<ProviderRoute, 'credential'>, options: GatewayOptions = {}) {
  const gateway = await ModelGateway.start(options);
  cleanups.push(() => gateway.close());
  const exchanges: GatewayExchange[] = [];
  const registration = gateway.register({ runId: 'run-leak', baseUrl, onExchange: (exchange) => exchanges.push(exchange), ...route });
  return { registration, exchanges, auth: { 'x-api-key': registration.capability } };
}

/** Every secret found anywhere in what the child received: status, headers and body. */
function leaked(reply: Reply, secrets: readonly string[]): string[] {
  const seen = `${reply.status} ${JSON.stringify(reply.headers)} ${reply.body}`;
  return secrets.filter((secret) => seen.includes(secret));
}

describe.each(CREDENTIALS.map((credential) => [credential.kind, credential] as const))('the gateway holding a %s credential (C3)', (_kind, credential) => {
  it('test_an_error_body_that_echoes_the_credential_twice_reaches_the_child_with_neither_copy', async () => {
    const upstream = await provider([{ kind: 'echo_credential', status: 401 }]);
    const { auth, registration, exchanges } = await gatewayTo(upstream.url, { credential: async () => credential });
    const reply = await post(`${registration.url}/v1/messages`, auth, MESSAGE);
    expect(reply.status).toBe(401);
    expect(JSON.parse(reply.body)).toEqual({ type: 'error', error: { type: 'authentication_error', message: 'invalid key [redacted]; the key you sent was [redacted]' } });
    expect(reply.headers['x-echoed-key']).toBe('[redacted]');
    expect(leaked(reply, [credential.value])).toEqual([]);
    expect(exchanges).toMatchObject([{ status: 401, problem: null }]);
  });

  it('test_a_streamed_answer_with_the_credential_split_across_chunks_reaches_the_child_redacted', async () => {
    const upstream = await provider([{ kind: 'echo_credential', status: 200, streamed: true }]);
    const { auth, registration, exchanges } = await gatewayTo(upstream.url, { credential: async () => credential });
    const reply = await post(`${registration.url}/v1/messages`, auth, MESSAGE);
    expect(reply.status).toBe(200);
    expect(streamedText(reply.body)).toBe('your key is [redacted] and again [redacted].');
    expect(reply.body).toContain('event: message_stop');
    expect(reply.headers['x-echoed-key']).toBe('[redacted]');
    expect(leaked(reply, [credential.value])).toEqual([]);
    expect(exchanges).toMatchObject([{ status: 200, problem: null, usage: { inputTokens: 3, outputTokens: 9 } }]);
  });

  it('test_no_answer_of_wards_own_on_any_error_path_holds_the_credential', async () => {
    const upstream = await provider([]);
    const { auth, registration } = await gatewayTo(
      upstream.url,
      { credential: async () => credential, modelRefusal: (model) => (model === 'claude-sonnet-4-5' ? null : `model ${model} is not allowed`) },
      { maxRequestBytes: 4096 },
    );
    const url = `${registration.url}/v1/messages`;
    const replies = [
      await post(`${registration.url}/v1/models`, auth, MESSAGE),
      await post(url, { 'x-api-key': 'x'.repeat(43) }, MESSAGE),
      await post(url, auth, '', 'GET'),
      await post(url, auth, 'x'.repeat(8192)),
      await post(url, auth, JSON.stringify({ model: 'claude-opus-4', messages: [] })),
    ];
    expect(replies.map((reply) => reply.status)).toEqual([404, 401, 405, 413, 403]);
    for (const reply of replies) expect(leaked(reply, [credential.value])).toEqual([]);

    // The provider is gone once the credential was read: a 502 in Ward's words, without it.
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const unreachable = await gatewayTo(`http://127.0.0.1:${port}`, { credential: async () => credential });
    const refused = await post(`${unreachable.registration.url}/v1/messages`, unreachable.auth, MESSAGE);
    expect(refused.status).toBe(502);
    expect(leaked(refused, [credential.value])).toEqual([]);
  });
});

describe('what reaches the provider at all (G2)', () => {
  it('test_a_request_to_any_path_but_the_model_endpoints_reaches_nothing_upstream', async () => {
    const upstream = await provider([]);
    const { auth, registration } = await gatewayTo(upstream.url, { credential: async () => CREDENTIALS[0]! });
    for (const path of ['/v1/models', '/v1/complete', '/v1/messages/batches', '/v1/messages/count_tokens/x', '/v1/messagesx', '/v1/files', '/v1', '', '/messages']) {
      const reply = await post(`${registration.url}${path}`, auth, MESSAGE);
      expect([path, reply.status]).toEqual([path, 404]);
    }
    // The fixture answers an unknown path 404 itself: only its log tells whether the gateway forwarded.
    expect(upstream.requests).toEqual([]);
    expect((await post(`${registration.url}/v1/messages/count_tokens`, auth, JSON.stringify({ model: 'x', messages: [] }))).status).toBe(200);
    expect(upstream.requests.map((request) => request.path)).toEqual(['/v1/messages/count_tokens']);
  });

  it('test_a_refreshed_sign_in_token_echoed_by_the_provider_reaches_the_child_redacted', async () => {
    const stale = 'oidc-stale-leak-canary-8b7a6c5d4e';
    const fresh = 'oidc-fresh-leak-canary-2e3f4a5b6c';
    const upstream = await provider([{ kind: 'http_error', status: 401, errorType: 'authentication_error' }, { kind: 'echo_credential', status: 200, streamed: true }]);
    const { auth, registration } = await gatewayTo(upstream.url, {
      credential: async () => ({ kind: 'bearer', value: stale }),
      refreshCredential: async () => ({ kind: 'bearer', value: fresh }),
    });
    const reply = await post(`${registration.url}/v1/messages`, auth, MESSAGE);
    expect(reply.status).toBe(200);
    expect(streamedText(reply.body)).toBe('your key is [redacted] and again [redacted].');
    expect(leaked(reply, [stale, fresh])).toEqual([]);
    expect(upstream.conversationRequests().map((request) => request.headers.authorization)).toEqual([`Bearer ${stale}`, `Bearer ${fresh}`]);
  });
});
