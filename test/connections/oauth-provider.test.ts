import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ConnectionOAuthProvider, oauthAccounts } from '../../main/connections/oauth.js';
import { openSecretStore } from '../../main/credentials/open-store.js';
import { namespaceDir } from '../../main/namespaces/namespace.js';
import { holdInChild } from '../support/lock-holder.js';
import { harness, type Harness } from './support.js';

function provider(h: Harness, url = 'https://mcp.example.com/mcp'): ConnectionOAuthProvider {
  return new ConnectionOAuthProvider({
    connection: 'remote',
    serverUrl: new URL(url),
    allowInsecureHttp: false,
    secrets: openSecretStore(h.core.home, h.ns, { kind: 'keychain' }),
    namespaceDir: namespaceDir(h.core.home, h.ns),
  });
}

const metadata = (overrides: Record<string, unknown> = {}) => ({
  authorizationServerUrl: 'https://auth.example.com',
  authorizationServerMetadata: {
    issuer: 'https://auth.example.com',
    authorization_endpoint: 'https://auth.example.com/authorize',
    token_endpoint: 'https://auth.example.com/token',
    response_types_supported: ['code'],
    code_challenge_methods_supported: ['S256'],
    ...overrides,
  },
});

describe('the connection OAuth provider', () => {
  it('deletes stale tokens only when the store still holds what it read (compare-before-delete, C4)', async () => {
    const h = harness();
    const store = openSecretStore(h.core.home, h.ns, { kind: 'keychain' });
    const account = oauthAccounts('remote').tokens;
    const first = JSON.stringify({ access_token: 'at-1', token_type: 'Bearer', refresh_token: 'rt-1' });
    const newer = JSON.stringify({ access_token: 'at-2', token_type: 'Bearer', refresh_token: 'rt-2' });
    await store.set(account, first);

    const stale = provider(h);
    expect(await stale.tokens()).toMatchObject({ access_token: 'at-1' });
    await store.set(account, newer); // another Ward process refreshed meanwhile
    await stale.invalidateCredentials('tokens');
    expect(await store.get(account)).toBe(newer);
    // It reads again instead of trusting its old copy.
    expect(await stale.tokens()).toMatchObject({ access_token: 'at-2' });

    await stale.invalidateCredentials('tokens');
    expect(await store.get(account)).toBeUndefined();
  });

  it('does not delete tokens while another process holds the connection lock: it waits for the release (C4)', async () => {
    const h = harness();
    const store = openSecretStore(h.core.home, h.ns, { kind: 'keychain' });
    const account = oauthAccounts('remote').tokens;
    const tokens = JSON.stringify({ access_token: 'at-1', token_type: 'Bearer', refresh_token: 'rt-1' });
    await store.set(account, tokens);
    const p = provider(h);
    await p.tokens();

    const other = holdInChild(p.lockFile);
    try {
      expect(await other.said).toBe('held');
      let finished = false;
      const invalidation = p.invalidateCredentials('tokens').finally(() => (finished = true));
      await sleep(500);
      expect(finished).toBe(false);
      expect(await store.get(account)).toBe(tokens);
      await other.release();
      await invalidation; // bounded by the lock's own timeout
      expect(await store.get(account)).toBeUndefined();
    } finally {
      await other.release();
    }
  });

  it('always names a resource: the server URL without metadata, the advertised one when it covers the server', async () => {
    const h = harness();
    const p = provider(h);
    expect((await p.validateResourceURL('https://mcp.example.com/mcp')).href).toBe('https://mcp.example.com/mcp');
    expect((await p.validateResourceURL('https://mcp.example.com/mcp', 'https://mcp.example.com/')).href).toBe('https://mcp.example.com/');
    await expect(p.validateResourceURL('https://mcp.example.com/mcp', 'https://other.example.com/mcp')).rejects.toThrow(/does not cover https:\/\/mcp\.example\.com\/mcp; sign-in refused/);
  });

  it('refuses authorization servers without S256, without metadata, or with plain-http endpoints', () => {
    const h = harness();
    const p = provider(h);
    expect(() => p.saveDiscoveryState(metadata({ code_challenge_methods_supported: undefined }))).toThrow(/does not advertise PKCE S256/);
    expect(() => p.saveDiscoveryState({ authorizationServerUrl: 'https://auth.example.com' })).toThrow(/no OAuth authorization server metadata/);
    expect(() => p.saveDiscoveryState(metadata({ token_endpoint: 'http://auth.example.com/token' }))).toThrow(/token endpoint http:\/\/auth\.example\.com does not use https/);
    expect(() => p.saveDiscoveryState(metadata())).not.toThrow();
  });

  it('outside a sign-in it never registers a client or opens a browser: it says "not signed in"', async () => {
    const h = harness();
    const p = provider(h);
    await expect(p.clientInformation()).rejects.toMatchObject({ code: 'not_signed_in', message: expect.stringMatching(/ward connections login remote/) });
    await expect(p.redirectToAuthorization(new URL('https://auth.example.com/authorize'))).rejects.toMatchObject({ code: 'not_signed_in' });
    expect(() => p.state()).toThrow(/not signed in/);
  });

  it('refuses an authorization URL without S256 or without the resource, even inside a sign-in', async () => {
    const h = harness();
    const p = provider(h);
    let opened = 0;
    p.setInteractive({ redirectUrl: 'http://127.0.0.1:1/callback', state: 's', onAuthorizationUrl: async () => void (opened += 1) });
    const url = (query: string) => new URL(`https://auth.example.com/authorize?${query}`);
    await expect(p.redirectToAuthorization(url('code_challenge_method=plain&resource=x&state=s'))).rejects.toThrow(/PKCE S256/);
    await expect(p.redirectToAuthorization(url('code_challenge_method=S256&state=s'))).rejects.toThrow(/resource indicator/);
    await p.redirectToAuthorization(url('code_challenge_method=S256&resource=x&state=s'));
    expect(opened).toBe(1);
  });
});
