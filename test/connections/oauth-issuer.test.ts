import { afterEach, describe, expect, it } from 'vitest';
import { openSecretStore } from '../../main/credentials/open-store.js';
import { oauthAccounts } from '../../main/connections/oauth.js';
import { followToCallback } from '../fixtures/oidc/provider.js';
import { startIssuerLab, type IssuerLab, type LabAuthServerOptions } from '../fixtures/mcp-oauth/issuer-lab.js';
import { harness, signal, type Harness } from './support.js';

/** Plays the person's browser: follows the authorization server's redirect, then visits the loopback callback. */
async function playBrowser(url: URL): Promise<void> {
  const callback = await followToCallback(url);
  void fetch(callback, { signal: AbortSignal.timeout(10_000) })
    .then((response) => response.arrayBuffer())
    .catch(() => undefined);
}

const labs: IssuerLab[] = [];
async function lab(servers: LabAuthServerOptions[], options: { pathless?: boolean } = {}): Promise<IssuerLab> {
  const started = await startIssuerLab({ servers, ...options });
  labs.push(started);
  return started;
}
afterEach(async () => {
  for (const started of labs.splice(0)) await started.close();
});

/** What the connection holds in the keychain: its tokens and its client registration. */
async function stored(h: Harness, name: string): Promise<{ tokens: string | undefined; client: string | undefined }> {
  const store = openSecretStore(h.core.home, h.ns, { kind: 'keychain' });
  return { tokens: await store.get(oauthAccounts(name).tokens), client: await store.get(oauthAccounts(name).client) };
}

async function added(h: Harness, name: string, remote: IssuerLab): Promise<void> {
  await h.manager.add({ transport: 'http', name, url: remote.url });
}

async function signedIn(h: Harness, name: string, remote: IssuerLab): Promise<void> {
  await added(h, name, remote);
  await h.manager.login(name, { openBrowser: playBrowser, timeoutMs: 20_000 });
  await h.manager.discover(name);
}

function echoRoute(h: Harness, name: string) {
  const found = h.manager.routes().find((route) => route.exposedName === `${name}__echo`);
  if (found === undefined) throw new Error(`no ${name}__echo route`);
  return found;
}

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

describe('the authorization server is the one the server named (RFC 8414 §3.3, RFC 9207)', () => {
  it('test_refuses_authorization_server_metadata_naming_another_issuer_before_registering_or_opening_the_browser', async () => {
    const remote = await lab([{ metadataIssuer: 'https://attacker.example.com' }]);
    const [server] = remote.servers;
    const h = harness();
    await added(h, 'remote', remote);
    let opened = 0;
    await expect(h.manager.login('remote', { openBrowser: async () => void (opened += 1), timeoutMs: 3_000 })).rejects.toMatchObject({
      code: 'signin_rejected',
      message: expect.stringMatching(`metadata names issuer "https://attacker\\.example\\.com" but was fetched for "${escape(server!.issuer)}"; sign-in refused`),
    });
    expect(opened).toBe(0);
    expect(server!.registrations).toEqual([]);
    expect(server!.authorizations).toEqual([]);
    expect(await stored(h, 'remote')).toEqual({ tokens: undefined, client: undefined });
  });

  it('test_refuses_a_redirect_whose_iss_names_another_issuer_advertised_or_not_or_only_differs_by_a_slash_and_exchanges_no_code', async () => {
    const cases: Array<[LabAuthServerOptions, (issuer: string) => string]> = [
      [{ advertiseIss: true, iss: 'wrong' }, () => 'https://evil.example.com'],
      [{ iss: 'wrong' }, () => 'https://evil.example.com'],
      [{ advertiseIss: true, iss: 'normalized' }, (issuer) => `${issuer}/`],
    ];
    for (const [options, named] of cases) {
      const remote = await lab([options]);
      const [server] = remote.servers;
      const h = harness();
      await added(h, 'remote', remote);
      await expect(h.manager.login('remote', { openBrowser: playBrowser, timeoutMs: 20_000 }), JSON.stringify(options)).rejects.toMatchObject({
        code: 'signin_rejected',
        message: expect.stringMatching(`redirect names issuer "${escape(named(server!.issuer))}" but this sign-in went to "${escape(server!.issuer)}"; sign-in refused`),
      });
      expect(server!.authorizations).toHaveLength(1);
      expect(server!.tokenRequests).toEqual([]);
      expect(await stored(h, 'remote')).toEqual({ tokens: undefined, client: undefined });
    }
  });

  it('test_refuses_a_redirect_without_iss_from_an_authorization_server_that_advertises_it', async () => {
    const remote = await lab([{ advertiseIss: true, iss: 'omit' }]);
    const [server] = remote.servers;
    const h = harness();
    await added(h, 'remote', remote);
    await expect(h.manager.login('remote', { openBrowser: playBrowser, timeoutMs: 20_000 })).rejects.toMatchObject({
      code: 'signin_rejected',
      message: expect.stringMatching(`authorization server "${escape(server!.issuer)}" says its redirects name it \\(authorization_response_iss_parameter_supported\\) but this one carries no iss; sign-in refused`),
    });
    expect(server!.tokenRequests).toEqual([]);
    expect(await stored(h, 'remote')).toEqual({ tokens: undefined, client: undefined });
  });

  it('test_signs_in_when_the_redirect_names_the_authorization_servers_issuer_or_when_it_names_none_and_none_was_promised', async () => {
    for (const options of [{ advertiseIss: true, iss: 'correct' }, { iss: 'omit' }] as const) {
      const remote = await lab([options]);
      const h = harness();
      await signedIn(h, 'remote', remote);
      expect(await h.manager.caller.callTool(echoRoute(h, 'remote'), { text: 'hi' }, signal()), JSON.stringify(options)).toMatchObject({ ok: true, content: [{ type: 'text', text: 'hi' }] });
      expect(remote.servers[0]!.tokenRequests.map((request) => request.grantType)).toEqual(['authorization_code']);
    }
  });
});

describe('the server moves to another authorization server', () => {
  /** Signed in at the first server, and refreshed there once: this process has found that server before. */
  async function refreshedAtTheFirst(remote: IssuerLab): Promise<Harness> {
    const h = harness();
    await signedIn(h, 'remote', remote);
    remote.expireAccessTokens();
    expect(await h.manager.caller.callTool(echoRoute(h, 'remote'), { text: 'refreshed' }, signal())).toMatchObject({ ok: true });
    expect(remote.servers[0]!.tokenRequests.map((request) => request.grantType)).toEqual(['authorization_code', 'refresh_token']);
    return h;
  }

  it('test_a_call_asks_for_a_new_sign_in_which_registers_with_the_new_server_and_never_shows_it_the_old_client_or_refresh_token', async () => {
    const remote = await lab([{}, {}]);
    const [first, second] = remote.servers;
    const h = await refreshedAtTheFirst(remote);
    remote.use(1);
    // Another Ward process (which discovers afresh) and this one.
    for (const manager of [h.reopen(), h.manager]) {
      const outcome = await manager.caller.callTool(echoRoute(h, 'remote'), { text: 'after' }, signal());
      expect(outcome).toMatchObject({ ok: false, errorCode: 'not_signed_in', message: expect.stringMatching(`now names authorization server "${escape(second!.issuer)}", not "${escape(first!.issuer)}"`) });
    }
    expect(h.manager.get('remote')).toMatchObject({ health: 'not_signed_in' });
    expect(second!.registrations).toEqual([]);
    expect(second!.authorizations).toEqual([]);
    expect(second!.tokenRequests).toEqual([]);

    await h.manager.login('remote', { openBrowser: playBrowser, timeoutMs: 20_000 });
    expect(second!.registrations).toEqual(['as2-client-1']);
    expect(second!.authorizations.map((request) => request.clientId)).toEqual(['as2-client-1']);
    expect(second!.tokenRequests.map((request) => [request.grantType, request.clientId, request.refreshToken])).toEqual([['authorization_code', 'as2-client-1', null]]);
    expect(await h.manager.caller.callTool(echoRoute(h, 'remote'), { text: 'moved' }, signal())).toMatchObject({ ok: true, content: [{ type: 'text', text: 'moved' }] });

    // The first server's client id and refresh tokens never reached the second.
    const seen = JSON.stringify([second!.authorizations, second!.tokenRequests]);
    for (const secret of [...first!.registrations, ...first!.refreshTokens]) expect(seen).not.toContain(secret);
  });

  it('test_signing_in_again_goes_to_the_authorization_server_the_server_names_now_even_in_a_process_that_refreshed_at_the_old_one', async () => {
    const remote = await lab([{}, {}]);
    const [first, second] = remote.servers;
    const h = await refreshedAtTheFirst(remote);
    remote.use(1);
    await h.manager.login('remote', { openBrowser: playBrowser, timeoutMs: 20_000 });
    expect(second!.registrations).toEqual(['as2-client-1']);
    expect(first!.authorizations).toHaveLength(1);
    expect(await h.manager.caller.callTool(echoRoute(h, 'remote'), { text: 'moved' }, signal())).toMatchObject({ ok: true, content: [{ type: 'text', text: 'moved' }] });
  });
});

describe('the resource indicator (RFC 8707)', () => {
  it('test_sends_the_resource_exactly_as_the_metadata_names_it_without_an_added_slash_on_authorization_code_and_refresh_requests', async () => {
    const remote = await lab([{}], { pathless: true });
    const [server] = remote.servers;
    expect(remote.resource).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const h = harness();
    await signedIn(h, 'root', remote);
    remote.expireAccessTokens();
    expect(await h.manager.caller.callTool(echoRoute(h, 'root'), { text: 'refreshed' }, signal())).toMatchObject({ ok: true, content: [{ type: 'text', text: 'refreshed' }] });
    expect(server!.authorizations.map((request) => request.resource)).toEqual([remote.resource]);
    expect(server!.tokenRequests.map((request) => [request.grantType, request.resource])).toEqual([
      ['authorization_code', remote.resource],
      ['refresh_token', remote.resource],
    ]);
  });
});
