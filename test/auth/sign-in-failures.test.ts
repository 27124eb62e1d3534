import { describe, expect, it } from 'vitest';
import { isLoopbackPeer, startCallbackServer } from '../../main/auth/loopback-callback.js';
import { signIn, signOut } from '../../main/auth/sign-in.js';
import { openSession } from '../../main/auth/session.js';
import { registryOf } from '../../main/auth/context.js';
import { sessionAccount } from '../../main/auth/registry.js';
import { KeychainBackend } from '../../main/credentials/keychain-store.js';
import { NamespacedSecretStore } from '../../main/credentials/secret-store.js';
import { parseNamespace } from '../../main/namespaces/namespace.js';
import { deadPort, followToCallback, startHangingServer, visitCallback } from '../fixtures/oidc/provider.js';
import { tempDir } from '../support/temp.js';
import { authContext, provider } from './support.js';

describe('sign-in failures are specific errors', () => {
  it('test_fails_with_signin_state_mismatch_on_a_callback_whose_state_is_not_this_sign_in', async () => {
    const idp = await provider();
    const statuses: (number | string)[] = [];
    const attempt = signIn(authContext(tempDir()), {
      issuer: idp.issuer,
      clientId: idp.clientId,
      openBrowser: async (url) => {
        const callback = await followToCallback(url);
        const forged = new URL(callback);
        forged.searchParams.set('state', 'not-the-state-of-this-sign-in');
        statuses.push(await visitCallback(forged));
        statuses.push(await visitCallback(callback));
      },
    });
    await expect(attempt).rejects.toMatchObject({ code: 'signin_state_mismatch', message: expect.stringContaining('does not match this sign-in') });
    expect(statuses[0]).toBe(400);
    expect(statuses[1]).not.toBe(200);
    expect(idp.counts.codeGrants).toBe(0);
  });

  it('test_accepts_exactly_one_callback_a_replayed_one_is_refused_and_the_code_is_exchanged_once', async () => {
    const idp = await provider();
    const statuses: (number | string)[] = [];
    const result = await signIn(authContext(tempDir()), {
      issuer: idp.issuer,
      clientId: idp.clientId,
      openBrowser: async (url) => {
        const callback = await followToCallback(url);
        statuses.push(...(await Promise.all([visitCallback(callback), visitCallback(callback)])));
        statuses.push(await visitCallback(callback));
      },
    });
    expect(result.session.subject).toBe('alice');
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    // Refused: answered 409, or the server had already closed (refused or reset before an answer).
    expect(statuses.filter((status) => status !== 200).every((status) => status === 409 || status === 'ECONNREFUSED' || status === 'ECONNRESET')).toBe(true);
    expect(idp.counts.codeGrants).toBe(1);
  });

  it('test_refuses_callbacks_from_a_peer_that_is_not_127_0_0_1_or_1_whatever_x_forwarded_for_says', async () => {
    expect(isLoopbackPeer('127.0.0.1')).toBe(true);
    expect(isLoopbackPeer('::1')).toBe(true);
    expect(isLoopbackPeer('::ffff:127.0.0.1')).toBe(true);
    expect(isLoopbackPeer('127.0.0.2')).toBe(false);
    expect(isLoopbackPeer('10.0.0.5')).toBe(false);
    expect(isLoopbackPeer('::ffff:192.168.1.9')).toBe(false);
    expect(isLoopbackPeer(undefined)).toBe(false);

    // The real server and the real check; the peer connects from another source address.
    const server = await startCallbackServer({ expectedState: 'S', timeoutMs: 10_000 });
    const url = new URL(`${server.redirectUri}?code=c&state=S`);
    expect(await visitCallback(url, { headers: { 'x-forwarded-for': '127.0.0.1', host: url.host }, localAddress: '127.0.0.2' })).toBe(403);
    expect(await visitCallback(url, { headers: { host: 'evil.example:80' } })).toBe(400);
    expect(await visitCallback(url)).toBe(200);
    await expect(server.result).resolves.toEqual(url);
    await server.close();
  });

  it('test_reports_the_provider_refusing_an_authorization_request_without_a_pkce_challenge', async () => {
    const idp = await provider();
    const attempt = signIn(authContext(tempDir()), {
      issuer: idp.issuer,
      clientId: idp.clientId,
      openBrowser: async (url) => {
        const stripped = new URL(url);
        stripped.searchParams.delete('code_challenge');
        stripped.searchParams.delete('code_challenge_method');
        await visitCallback(await followToCallback(stripped));
      },
    });
    await expect(attempt).rejects.toMatchObject({ code: 'signin_rejected', message: 'sign-in: the identity provider refused (invalid_request)' });
    expect(idp.counts.codeGrants).toBe(0);
  });

  it('test_reports_a_provider_that_refuses_connections_as_provider_unreachable', async () => {
    const issuer = `http://127.0.0.1:${await deadPort()}`;
    const attempt = signIn(authContext(tempDir()), { issuer, clientId: 'x', openBrowser: async () => undefined });
    await expect(attempt).rejects.toMatchObject({ code: 'provider_unreachable', message: `discovery at ${issuer}: cannot reach the identity provider (ECONNREFUSED)` });
  });

  it('test_gives_up_on_a_provider_that_never_answers_after_the_request_bound_provider_timeout', async () => {
    const hanging = await startHangingServer();
    try {
      const attempt = signIn(authContext(tempDir(), 'default', { requestTimeoutMs: 300 }), { issuer: hanging.url, clientId: 'x', openBrowser: async () => undefined });
      await expect(attempt).rejects.toMatchObject({ code: 'provider_timeout', message: `discovery at ${hanging.url}: the identity provider did not answer in time` });
    } finally {
      await hanging.close();
    }
  });

  it('test_stops_waiting_for_the_browser_after_the_sign_in_bound_signin_timeout_and_closes_the_callback', async () => {
    const idp = await provider();
    let authorizationUrl: URL | undefined;
    const attempt = signIn(authContext(tempDir()), { issuer: idp.issuer, clientId: idp.clientId, timeoutMs: 300, openBrowser: async (url) => void (authorizationUrl = url) });
    await expect(attempt).rejects.toMatchObject({ code: 'signin_timeout' });
    const callback = await followToCallback(authorizationUrl!);
    expect(await visitCallback(callback)).toBe('ECONNREFUSED');
  });

  it('test_fails_with_keychain_unavailable_before_opening_the_browser_when_the_credential_store_is_unreachable', async () => {
    const idp = await provider();
    const broken = { getPassword: async () => Promise.reject(new Error('Cannot autolaunch D-Bus without X11 $DISPLAY')), setPassword: async () => undefined, deletePassword: async () => false, findCredentials: async () => [] };
    const context = { ...authContext(tempDir()), store: new NamespacedSecretStore(parseNamespace('default'), new KeychainBackend({ keytar: broken })) };
    let opened = false;
    const attempt = signIn(context, { issuer: idp.issuer, clientId: idp.clientId, openBrowser: async () => void (opened = true) });
    await expect(attempt).rejects.toMatchObject({ code: 'keychain_unavailable', message: expect.stringContaining('Ward never falls back to plaintext') });
    expect(opened).toBe(false);
  });

  it('test_refuses_a_non_loopback_http_issuer_unless_allowinsecurehttp_is_set', async () => {
    await expect(signIn(authContext(tempDir()), { issuer: 'http://idp.example.com', clientId: 'x', openBrowser: async () => undefined })).rejects.toMatchObject({ code: 'invalid_config' });
  });
});

describe('re-login and logout', () => {
  const play = async (url: URL) => void (await visitCallback(await followToCallback(url)));

  it('test_keeps_a_re_login_that_could_not_revoke_the_old_session_cleanuprequired_old_entry_kept_for_logout', async () => {
    const idp = await provider();
    const context = authContext(tempDir());
    const first = await signIn(context, { issuer: idp.issuer, clientId: idp.clientId, openBrowser: play });
    idp.failRevocation = true;
    const second = await signIn(context, { issuer: idp.issuer, clientId: idp.clientId, openBrowser: play });
    expect(second.cleanupRequired).toBe(true);
    const records = registryOf(context).list();
    expect(records.map((record) => [record.id, record.cleanupPending])).toEqual([
      [first.session.id, true],
      [second.session.id, false],
    ]);
    expect(await context.store.get(sessionAccount(first.session))).toBeDefined();
    expect(openSession(context).record.id).toBe(second.session.id);

    const blocked = await signOut(context);
    expect(blocked.kept).toHaveLength(2);
    expect(registryOf(context).list()).toHaveLength(2);

    idp.failRevocation = false;
    const done = await signOut(context);
    expect(done.signedOut.map((entry) => entry.revoked)).toEqual([true, true]);
    expect(registryOf(context).list()).toEqual([]);
    expect(await context.store.get(sessionAccount(first.session))).toBeUndefined();
  });

  it('test_replaces_the_same_identity_on_re_login_revoking_the_old_tokens_and_keeps_a_different_identity', async () => {
    const idp = await provider();
    const context = authContext(tempDir());
    const first = await signIn(context, { issuer: idp.issuer, clientId: idp.clientId, openBrowser: play });
    const oldTokens = await openSession(context).tokens();
    const again = await signIn(context, { issuer: idp.issuer, clientId: idp.clientId, openBrowser: play });
    expect(again.cleanupRequired).toBe(false);
    expect(registryOf(context).list().map((record) => record.id)).toEqual([again.session.id]);
    expect(await context.store.get(sessionAccount(first.session))).toBeUndefined();
    expect((await fetch(idp.resourceUrl, { headers: { authorization: `Bearer ${oldTokens.accessToken}` } })).status).toBe(401);

    idp.subject = 'bob';
    await signIn(context, { issuer: idp.issuer, clientId: idp.clientId, openBrowser: play });
    expect(registryOf(context).list().map((record) => record.subject)).toEqual(['alice', 'bob']);
    expect(() => openSession(context)).toThrow('several sign-ins match in namespace default');
  });
});
