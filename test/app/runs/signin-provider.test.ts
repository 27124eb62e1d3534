/** G2, C5: a model profile that reaches a company's LLM gateway with the namespace's OpenID Connect sign-in instead of a key. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { signIn } from '../../../main/auth/sign-in.js';
import { openSession } from '../../../main/auth/session.js';
import { namespaceDir } from '../../../main/namespaces/namespace.js';
import { followToCallback } from '../../fixtures/oidc/provider.js';
import { authContext, provider as oidcProvider } from '../../auth/support.js';
import { closeHarnessesAfterEach, CANARY_KEY, payloads, startHarness, type Harness } from './harness.js';

let harness: Harness | undefined;
closeHarnessesAfterEach();

describe('a model provider reached with the sign-in (G2, C5)', () => {
  it('test_the_gateway_sends_the_sign_ins_access_token_refreshes_it_once_after_a_401_and_the_child_holds_neither', async () => {
    const idp = await oidcProvider();
    harness = await startHarness([{ kind: 'http_error', status: 401, errorType: 'authentication_error', message: 'token expired' }, { blocks: [{ type: 'text', text: 'Hello via the company gateway.' }] }]);
    const context = authContext(harness.home);
    await signIn(context, { issuer: idp.issuer, clientId: idp.clientId, openBrowser: async (url) => void followToCallback(url).then((callback) => fetch(callback)) });
    const before = await openSession(context).tokens();
    fs.writeFileSync(
      path.join(namespaceDir(harness.home, harness.ns), 'model-profiles.json'),
      JSON.stringify({ profiles: { default: { baseUrl: harness.provider.url, model: 'claude-sonnet-4-5', signIn: { issuer: idp.issuer, clientId: idp.clientId } } } }),
    );

    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'hello' });
    expect(await handle.done).toMatchObject({ state: 'succeeded' });
    const events = harness.events(handle.conversationId);
    expect(payloads<{ text: string }>(events, 'assistant_text')[0]!.text).toBe('Hello via the company gateway.');

    // The provider saw the sign-in's token, then (after its 401) the refreshed one; never a model key.
    const after = await openSession(context).tokens();
    expect(after.accessToken).not.toBe(before.accessToken);
    const seen = harness.provider.conversationRequests().map((request) => [request.headers.authorization, request.headers['x-api-key']]);
    expect(seen).toEqual([
      [`Bearer ${before.accessToken}`, undefined],
      [`Bearer ${after.accessToken}`, undefined],
    ]);
    expect(JSON.stringify(harness.provider.requests)).not.toContain(CANARY_KEY);
    // Neither token is in the journal.
    const journal = JSON.stringify(events);
    expect(journal).not.toContain(before.accessToken);
    expect(journal).not.toContain(after.accessToken);
    expect(payloads(events, 'model_call').map((call) => (call as { status: number }).status)).toEqual([200]);
  });

  it('test_a_profile_that_names_a_sign_in_the_namespace_does_not_have_refuses_the_turn_with_what_to_do', async () => {
    harness = await startHarness([{ blocks: [{ type: 'text', text: 'never' }] }]);
    harness.core.store(harness.ns);
    fs.writeFileSync(
      path.join(namespaceDir(harness.home, harness.ns), 'model-profiles.json'),
      JSON.stringify({ profiles: { default: { baseUrl: harness.provider.url, model: 'claude-sonnet-4-5', signIn: { issuer: 'https://idp.example.com', clientId: 'ward' } } } }),
    );
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'hello' });
    expect(await handle.done).toMatchObject({ state: 'failed', reason: expect.stringContaining('run "ward --namespace default login --issuer https://idp.example.com --client-id ward"') });
    expect(harness.provider.requests).toEqual([]);
  });
});
