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
  it('test_deletes_stale_tokens_only_when_the_store_still_holds_what_it_read_compare_before_delete_c4', async () => {
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

  it('test_does_not_delete_tokens_while_another_process_holds_the_connection_lock_it_waits_for_the_release_c4', async () => {
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

  it('test_always_names_a_resource_the_server_url_without_metadata_the_advertised_one_when_it_covers_the_server', async () => {
    const h = harness();
    const p = provider(h);
    expect((await p.validateResourceURL('https://mcp.example.com/mcp')).href).toBe('https://mcp.example.com/mcp');
    expect((await p.validateResourceURL('https://mcp.example.com/mcp', 'https://mcp.example.com/')).href).toBe('https://mcp.example.com/');
    await expect(p.validateResourceURL('https://mcp.example.com/mcp', 'https://other.example.com/mcp')).rejects.toThrow(/does not cover https:\/\/mcp\.example\.com\/mcp; sign-in refused/);
  });

  it('test_refuses_authorization_servers_without_s256_without_metadata_or_with_plain_http_endpoints', async () => {
    const h = harness();
    const p = provider(h);
    await expect(p.saveDiscoveryState(metadata({ code_challenge_methods_supported: undefined }))).rejects.toThrow(/does not advertise PKCE S256/);
    await expect(p.saveDiscoveryState({ authorizationServerUrl: 'https://auth.example.com' })).rejects.toThrow(/no OAuth authorization server metadata/);
    await expect(p.saveDiscoveryState(metadata({ token_endpoint: 'http://auth.example.com/token' }))).rejects.toThrow(/token endpoint http:\/\/auth\.example\.com does not use https/);
    await expect(p.saveDiscoveryState(metadata())).resolves.toBeUndefined();
  });

  it('test_names_a_bare_origin_resource_without_the_slash_url_parsing_adds_with_metadata_or_without', async () => {
    const h = harness();
    const p = provider(h, 'https://mcp.example.com');
    // The SDK hands over the server URL parsed, which has gained a "/".
    expect(String(await p.validateResourceURL('https://mcp.example.com/'))).toBe('https://mcp.example.com');
    expect((await p.validateResourceURL('https://mcp.example.com/', 'https://mcp.example.com')).href).toBe('https://mcp.example.com');
    expect((await p.validateResourceURL('https://mcp.example.com/?tenant=a')).href).toBe('https://mcp.example.com/?tenant=a');
  });

  it('test_outside_a_sign_in_it_never_registers_a_client_or_opens_a_browser_it_says_not_signed_in', async () => {
    const h = harness();
    const p = provider(h);
    await expect(p.clientInformation()).rejects.toMatchObject({ code: 'not_signed_in', message: expect.stringMatching(/ward connections login remote/) });
    await expect(p.redirectToAuthorization(new URL('https://auth.example.com/authorize'))).rejects.toMatchObject({ code: 'not_signed_in' });
    expect(() => p.state()).toThrow(/not signed in/);
  });

  it('test_refuses_an_authorization_url_without_s256_or_without_the_resource_even_inside_a_sign_in', async () => {
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
