import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { signIn, signOut } from '../../main/auth/sign-in.js';
import { openSession } from '../../main/auth/session.js';
import { browserCommand } from '../../main/auth/browser.js';
import { followToCallback } from '../fixtures/oidc/provider.js';
import { tempDir } from '../support/temp.js';
import { authContext, provider } from './support.js';

/** Plays the browser for a sign-in: follow the provider, then deliver the callback. */
function browser(): { openBrowser: (url: URL) => Promise<void>; delivered: Promise<Response> } {
  let deliver!: (response: Promise<Response>) => void;
  const delivered = new Promise<Response>((resolve) => (deliver = (response) => resolve(response)));
  return {
    openBrowser: async (url) => {
      deliver(followToCallback(url).then((callback) => fetch(callback)));
    },
    delivered,
  };
}

describe('sign-in against a real OpenID provider', () => {
  it('test_signs_in_end_to_end_tokens_in_the_keychain_public_metadata_in_the_registry_none_of_the_tokens_on_disk', async () => {
    const idp = await provider();
    const home = tempDir();
    const context = authContext(home);
    const play = browser();
    const result = await signIn(context, { issuer: idp.issuer, clientId: idp.clientId, openBrowser: play.openBrowser });
    expect((await play.delivered).status).toBe(200);
    expect(result.cleanupRequired).toBe(false);
    expect(result.session).toMatchObject({ issuer: idp.issuer, clientId: idp.clientId, subject: 'alice', cleanupPending: false });

    const session = openSession(context);
    const tokens = await session.tokens();
    expect(tokens.accessToken.length).toBeGreaterThan(10);
    expect(tokens.refreshToken).toBeDefined();
    const me = await session.withAccessToken((token) => fetch(idp.resourceUrl, { headers: { authorization: `Bearer ${token}` } }));
    expect(await me.json()).toEqual({ sub: 'alice' });

    const registry = fs.readFileSync(path.join(home, 'namespaces', context.namespace.hash, 'signin-registry.json'), 'utf8');
    expect(registry).toContain('alice');
    for (const file of fs.readdirSync(home, { recursive: true, withFileTypes: true })) {
      if (!file.isFile()) continue;
      const bytes = fs.readFileSync(path.join(file.parentPath, file.name)).toString('latin1');
      expect(bytes).not.toContain(tokens.accessToken);
      expect(bytes).not.toContain(tokens.refreshToken!);
    }

    const out = await signOut(context);
    expect(out.signedOut).toEqual([{ issuer: idp.issuer, subject: 'alice', revoked: true }]);
    expect(await context.store.get(session.account)).toBeUndefined();
    const after = await fetch(idp.resourceUrl, { headers: { authorization: `Bearer ${tokens.accessToken}` } });
    expect(after.status).toBe(401);
  });
});

describe('sign-in and namespaces', () => {
  it('test_keeps_sign_ins_per_namespace_personal_does_not_see_the_tokens_or_the_session_of_work', async () => {
    const idp = await provider();
    const home = tempDir();
    const work = authContext(home, 'work');
    const personal = authContext(home, 'personal');
    const urls: URL[] = [];
    await signIn(work, {
      issuer: idp.issuer,
      clientId: idp.clientId,
      openBrowser: async (url) => {
        urls.push(url);
        await fetch(await followToCallback(url));
      },
    });
    const session = openSession(work);
    const tokens = await session.tokens();
    expect(() => openSession(personal)).toThrow('not signed in in namespace personal; run "ward --namespace personal login --issuer URL --client-id ID"');
    expect(await personal.store.get(session.account)).toBeUndefined();
    expect(await personal.store.delete(session.account)).toBe(false);
    expect(await work.store.get(session.account)).toBeDefined();
    // The only child a sign-in starts is the browser; its argv is the authorization URL, holding no token.
    const argv = browserCommand(urls[0]!, 'linux');
    expect(argv).toEqual({ file: 'xdg-open', args: [urls[0]!.href] });
    for (const secret of [tokens.accessToken, tokens.refreshToken!, tokens.idToken!]) expect(argv.args.join(' ')).not.toContain(secret);
    expect(urls[0]!.searchParams.get('code_challenge_method')).toBe('S256');
    expect(urls[0]!.searchParams.get('redirect_uri')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    for (const name of ['state', 'nonce', 'code_challenge']) expect(urls[0]!.searchParams.get(name)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await signOut(work);
  });
});
