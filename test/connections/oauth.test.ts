import fs from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { Broker } from '../../main/broker/broker.js';
import type { BrokerEvent } from '../../main/broker/types.js';
import { openSecretStore } from '../../main/credentials/open-store.js';
import { oauthAccounts } from '../../main/connections/oauth.js';
import { followToCallback, visitCallback } from '../fixtures/oidc/provider.js';
import { startPlainPkceServer, startProtectedServer, type ProtectedServer, type ProtectedServerOptions } from '../fixtures/mcp-oauth/protected-server.js';
import { startSimpleAuthServer } from '../fixtures/mcp-oauth/simple-auth-server.js';
import { WardApp } from '../../main/app/ward-app.js';
import { databaseBytes, harness, signal, stdioSpec, type Harness } from './support.js';

/** Plays the person's browser: follows the authorization server's redirects, then visits the loopback callback. */
async function playBrowser(url: URL): Promise<void> {
  const callback = await followToCallback(url);
  void fetch(callback, { signal: AbortSignal.timeout(10_000) }).then((response) => response.arrayBuffer());
}

const servers: Array<{ close(): Promise<void> }> = [];
async function server(options: ProtectedServerOptions = {}): Promise<ProtectedServer> {
  const started = await startProtectedServer(options);
  servers.push(started);
  return started;
}
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function signedIn(h: Harness, name: string, remote: { url: string }): Promise<void> {
  await h.manager.add({ transport: 'http', name, url: remote.url });
  await h.manager.login(name, { openBrowser: playBrowser, timeoutMs: 20_000 });
  await h.manager.discover(name);
}

async function storedTokens(h: Harness, name: string): Promise<{ access_token: string; refresh_token?: string } | undefined> {
  const raw = await openSecretStore(h.core.home, h.ns, { kind: 'keychain' }).get(oauthAccounts(name).tokens);
  return raw === undefined ? undefined : (JSON.parse(raw) as { access_token: string; refresh_token?: string });
}

function echoRoute(h: Harness, name: string) {
  const found = h.manager.routes().find((r) => r.exposedName === `${name}__echo`);
  if (found === undefined) throw new Error(`no ${name}__echo route`);
  return found;
}

describe('remote connections with OAuth', () => {
  it('test_signs_in_discovery_registration_pkce_s256_the_resource_parameter_and_calls_a_tool_with_the_token', async () => {
    const remote = await server();
    const h = harness();
    await h.manager.add({ transport: 'http', name: 'remote', url: remote.url });
    await expect(h.manager.discover('remote')).rejects.toMatchObject({ code: 'not_signed_in', message: expect.stringMatching(/ward connections login remote/) });
    expect(remote.counts.registrations).toBe(0); // registering is part of signing in, never a side effect
    expect(h.manager.get('remote')).toMatchObject({ health: 'not_signed_in', lastErrorCode: 'not_signed_in' });

    await h.manager.login('remote', { openBrowser: playBrowser, timeoutMs: 20_000 });
    expect(remote.counts).toMatchObject({ registrations: 1, codeGrants: 1 });
    expect(remote.seen).toMatchObject({ authorizationResource: remote.url, challengeMethod: 'S256', tokenResources: [remote.url] });
    expect(h.manager.get('remote')).toMatchObject({ health: 'ok', lastErrorCode: null });

    const { pins } = await h.manager.discover('remote');
    expect(pins.map((p) => p.name)).toContain('echo');
    expect(await h.manager.caller.callTool(echoRoute(h, 'remote'), { text: 'hi' }, signal())).toMatchObject({ ok: true, content: [{ type: 'text', text: 'hi' }] });
    const tokens = await storedTokens(h, 'remote');
    expect(remote.authorizations.at(-1)).toBe(`Bearer ${tokens!.access_token}`);
  });

  it('test_a_rejected_access_token_is_refreshed_once_rotating_the_refresh_token_and_the_call_goes_through', async () => {
    const remote = await server();
    const h = harness();
    await signedIn(h, 'remote', remote);
    const before = await storedTokens(h, 'remote');
    await remote.expireAccessTokens();
    expect(await h.manager.caller.callTool(echoRoute(h, 'remote'), { text: 'again' }, signal())).toMatchObject({ ok: true, content: [{ type: 'text', text: 'again' }] });
    expect(remote.counts.refreshGrants).toBe(1);
    const after = await storedTokens(h, 'remote');
    expect(after!.access_token).not.toBe(before!.access_token);
    expect(after!.refresh_token).toBeDefined();
    expect(after!.refresh_token).not.toBe(before!.refresh_token);
    expect(remote.seen.tokenResources.at(-1)).toBe(remote.url);
  });

  it('test_a_long_running_process_picks_up_tokens_another_process_refreshed_instead_of_reusing_its_stale_refresh_token_no_forced_sign_out', async () => {
    const remote = await server();
    const h = harness();
    await signedIn(h, 'remote', remote);
    expect(await h.manager.caller.callTool(echoRoute(h, 'remote'), { text: 'a' }, signal())).toMatchObject({ ok: true });
    const other = h.reopen();
    expect(await other.caller.callTool(echoRoute(h, 'remote'), { text: 'b' }, signal())).toMatchObject({ ok: true });

    // The other process refreshes (rotating the refresh token); this one still holds the old pair.
    await remote.expireAccessTokens();
    expect(await other.caller.callTool(echoRoute(h, 'remote'), { text: 'c' }, signal())).toMatchObject({ ok: true });
    expect(await h.manager.caller.callTool(echoRoute(h, 'remote'), { text: 'd' }, signal())).toMatchObject({ ok: true });
    expect(remote.counts.refreshGrants).toBe(1);
  });

  it('test_two_processes_hitting_an_expired_token_at_once_refresh_once_under_the_connection_lock_and_both_calls_go_through', async () => {
    const remote = await server();
    const h = harness();
    await signedIn(h, 'remote', remote);
    const other = h.reopen();
    for (const manager of [h.manager, other]) expect(await manager.caller.callTool(echoRoute(h, 'remote'), { text: 'warm' }, signal())).toMatchObject({ ok: true });
    await remote.expireAccessTokens();
    const outcomes = await Promise.all([h.manager, other, h.manager, other].map((manager, i) => manager.caller.callTool(echoRoute(h, 'remote'), { text: `at-once-${i}` }, signal())));
    expect(outcomes.every((outcome) => outcome.ok)).toBe(true);
    expect(remote.counts.refreshGrants).toBe(1);
  });

  it('test_a_new_ward_process_uses_the_stored_tokens_without_signing_in_again', async () => {
    const remote = await server();
    const h = harness();
    await signedIn(h, 'remote', remote);
    const second = h.reopen();
    expect(await second.caller.callTool(echoRoute(h, 'remote'), { text: 'from another process' }, signal())).toMatchObject({ ok: true });
    expect(remote.counts.codeGrants).toBe(1);
  });

  it('test_after_revocation_a_call_fails_as_not_signed_in_sign_in_again_the_dead_tokens_are_deleted_and_signing_in_again_works', async () => {
    const remote = await server();
    const h = harness();
    await signedIn(h, 'remote', remote);
    await remote.revokeGrants();
    const outcome = await h.manager.caller.callTool(echoRoute(h, 'remote'), { text: 'x' }, signal());
    expect(outcome).toMatchObject({ ok: false, errorCode: 'not_signed_in' });
    expect(JSON.stringify(outcome)).not.toContain('must not be forwarded');
    expect(h.manager.get('remote')).toMatchObject({ health: 'not_signed_in', lastErrorCode: 'not_signed_in' });
    expect(await storedTokens(h, 'remote')).toBeUndefined();

    await h.manager.login('remote', { openBrowser: playBrowser, timeoutMs: 20_000 });
    expect(await h.manager.caller.callTool(echoRoute(h, 'remote'), { text: 'back' }, signal())).toMatchObject({ ok: true });
  });

  it('test_a_server_that_rejects_even_a_freshly_refreshed_token_gives_unauthorized_after_exactly_one_retry', async () => {
    const remote = await server();
    const h = harness();
    await signedIn(h, 'remote', remote);
    const seen = remote.authorizations.length;
    remote.rejectAll = true;
    expect(await h.manager.caller.callTool(echoRoute(h, 'remote'), { text: 'x' }, signal())).toMatchObject({ ok: false, errorCode: 'unauthorized' });
    expect(remote.counts.refreshGrants).toBe(1);
    expect(remote.authorizations.length - seen).toBe(2);
  });

  it('test_refuses_an_authorization_server_that_does_not_advertise_pkce_s256_before_opening_the_browser', async () => {
    const plain = await startPlainPkceServer();
    servers.push(plain);
    const h = harness();
    await h.manager.add({ transport: 'http', name: 'weak', url: plain.url });
    let opened = 0;
    await expect(h.manager.login('weak', { openBrowser: async () => void (opened += 1), timeoutMs: 5_000 })).rejects.toMatchObject({
      code: 'signin_rejected',
      message: expect.stringMatching(/does not advertise PKCE S256; sign-in refused/),
    });
    expect(opened).toBe(0);
  });

  it('test_fails_the_sign_in_on_a_callback_with_the_wrong_state_and_the_valid_callback_after_it_is_refused', async () => {
    const remote = await server();
    const h = harness();
    await h.manager.add({ transport: 'http', name: 'remote', url: remote.url });
    const statuses: (number | string)[] = [];
    const login = h.manager.login('remote', {
      timeoutMs: 20_000,
      openBrowser: async (url) => {
        const callback = await followToCallback(url);
        const forged = new URL(callback);
        forged.searchParams.set('state', 'forged');
        statuses.push(await visitCallback(forged));
        statuses.push(await visitCallback(callback));
      },
    });
    await expect(login).rejects.toMatchObject({ code: 'signin_state_mismatch' });
    expect(statuses[0]).toBe(400);
    // Refused: answered 409, or the callback had already closed.
    expect(['ECONNREFUSED', 'ECONNRESET', 409]).toContain(statuses[1]);
    expect(remote.counts.codeGrants).toBe(0);
    expect(await storedTokens(h, 'remote')).toBeUndefined();
  });

  it('test_refuses_a_callback_whose_host_is_not_the_loopback_address_it_was_sent_to_then_accepts_the_real_one', async () => {
    const remote = await server();
    const h = harness();
    await h.manager.add({ transport: 'http', name: 'remote', url: remote.url });
    const statuses: (number | string)[] = [];
    await h.manager.login('remote', {
      timeoutMs: 20_000,
      openBrowser: async (url) => {
        const callback = await followToCallback(url);
        // A page on another site making the browser call 127.0.0.1 (DNS rebinding) carries its own Host.
        statuses.push(await visitCallback(callback, { headers: { host: `evil.example:${callback.port}` } }));
        statuses.push(await visitCallback(callback));
      },
    });
    expect(statuses).toEqual([400, 200]);
    expect(remote.counts.codeGrants).toBe(1);
    expect(await h.manager.caller.callTool((await h.manager.discover('remote'), echoRoute(h, 'remote')), { text: 'x' }, signal())).toMatchObject({ ok: true });
  });

  it('test_gives_up_waiting_for_the_browser_after_the_bounded_wait', async () => {
    const remote = await server();
    const h = harness();
    await h.manager.add({ transport: 'http', name: 'remote', url: remote.url });
    await expect(h.manager.login('remote', { openBrowser: async () => undefined, timeoutMs: 300 })).rejects.toMatchObject({ code: 'signin_timeout' });
    expect(await storedTokens(h, 'remote')).toBeUndefined();
  });

  it('test_a_sign_in_that_fails_keeps_the_earlier_tokens_in_use', async () => {
    const remote = await server();
    const h = harness();
    await signedIn(h, 'remote', remote);
    await expect(h.manager.login('remote', { openBrowser: async () => undefined, timeoutMs: 300 })).rejects.toMatchObject({ code: 'signin_timeout' });
    expect(await h.manager.caller.callTool(echoRoute(h, 'remote'), { text: 'still signed in' }, signal())).toMatchObject({ ok: true });
    expect(remote.counts.codeGrants).toBe(1);
  });

  it('test_canary_a_connection_token_reaches_only_its_own_server_never_another_server_a_child_the_journal_or_the_database', async () => {
    const first = await server();
    const second = await server();
    const h = harness();
    await signedIn(h, 'first', first);
    await signedIn(h, 'second', second);
    await h.manager.add(stdioSpec('local'));
    await h.manager.discover('local');
    const firstToken = (await storedTokens(h, 'first'))!;
    const secondToken = (await storedTokens(h, 'second'))!;
    const canaries = [firstToken.access_token, firstToken.refresh_token!, secondToken.access_token, secondToken.refresh_token!];

    // A run: the child calls tools of all three connections through the broker, events go to the journal.
    const store = h.core.store(h.ns);
    const agent = store.agents.publish('helper', { instructions: 'x' });
    const conversation = store.conversations.create({ agentId: agent.agentId, agentVersion: agent.version, title: 'canary' });
    const broker = await Broker.start();
    const registration = broker.register({
      runId: 'canary-run',
      tools: h.manager.routes(),
      upstreams: h.manager.caller,
      isAcceptingCalls: () => true,
      onEvent: (event: BrokerEvent) => void store.journal.append(conversation.id, { type: event.kind, payload: event, runId: null }),
    });
    const child = new Client({ name: 'child', version: '1' });
    await child.connect(new StreamableHTTPClientTransport(new URL(registration.url), { requestInit: { headers: { authorization: `Bearer ${registration.capability}` } } }));
    for (const tool of ['first__echo', 'second__echo', 'local__echo', 'local__env']) {
      const result = await child.callTool({ name: tool, arguments: { text: tool } });
      expect(result.isError, tool).toBeFalsy();
    }
    await first.revokeGrants();
    const failed = await child.callTool({ name: 'first__echo', arguments: { text: 'x' } });
    expect(failed).toMatchObject({ isError: true, content: [{ type: 'text', text: expect.stringMatching(/not signed in.*\[not_signed_in\]/) }] });
    await child.close();
    await registration.close();
    await broker.close();

    // Each server saw only its own tokens.
    expect(first.authorizations.every((header) => header === `Bearer ${firstToken.access_token}`)).toBe(true);
    expect(second.authorizations.every((header) => header === `Bearer ${secondToken.access_token}`)).toBe(true);
    // The stdio child got neither in its environment.
    const local = await h.manager.connection('local');
    const environ = fs.readFileSync(`/proc/${local.pid}/environ`, 'utf8');
    const journal = JSON.stringify([...store.journal.read(conversation.id, 0)]);
    const bytes = databaseBytes(h);
    for (const canary of canaries) {
      expect(environ.includes(canary)).toBe(false);
      expect(journal.includes(canary)).toBe(false);
      expect(bytes.includes(canary)).toBe(false);
    }
    expect(journal).toContain("tool_call_finished");
    expect(journal).toContain("not_signed_in");
  });
});

describe('what a protected server says in its 401 and 403 (MCP authorization 2025-11-25)', () => {
  it('test_signs_in_to_a_server_that_names_its_metadata_only_in_the_401_it_answers_without_a_token', async () => {
    const remote = await server({ metadataPath: '/custom/metadata/location.json' });
    const h = harness();
    await signedIn(h, 'remote', remote);
    expect(remote.seen.authorizationResource).toBe(remote.url);
    expect(await h.manager.caller.callTool(echoRoute(h, 'remote'), { text: 'found it' }, signal())).toMatchObject({ ok: true });
  });

  it('test_asks_for_the_scope_the_401_names_which_the_metadata_does_not_list_so_the_token_is_accepted', async () => {
    const remote = await server({ challengeScope: 'mcp:tools' });
    const h = harness();
    await signedIn(h, 'remote', remote);
    expect(remote.seen.authorizationScopes).toEqual(['mcp:tools']);
    expect(await h.manager.caller.callTool(echoRoute(h, 'remote'), { text: 'in scope' }, signal())).toMatchObject({ ok: true });
    expect(h.manager.get('remote')).toMatchObject({ scope: 'mcp:tools', wantedScope: null });
  });

  it('test_step_up_a_403_insufficient_scope_fails_the_call_as_needing_more_access_and_the_next_sign_in_asks_for_the_union', async () => {
    const remote = await server({ challengeScope: 'mcp:tools', callScope: 'mcp:write' });
    const h = harness();
    await signedIn(h, 'remote', remote);
    const outcome = await h.manager.caller.callTool(echoRoute(h, 'remote'), { text: 'write' }, signal());
    expect(outcome).toMatchObject({ ok: false, errorCode: 'insufficient_scope', message: expect.stringMatching(/needs more access.*sign in again/) });
    expect(JSON.stringify(outcome)).not.toContain('must not be forwarded');
    expect(h.manager.get('remote')).toMatchObject({ health: 'not_signed_in', lastErrorCode: 'insufficient_scope', wantedScope: 'mcp:tools mcp:write' });
    expect(remote.counts.toolCalls).toBe(0);

    await h.manager.login('remote', { openBrowser: playBrowser, timeoutMs: 20_000 });
    expect(remote.seen.authorizationScopes).toEqual(['mcp:tools', 'mcp:tools mcp:write']);
    expect(await h.manager.caller.callTool(echoRoute(h, 'remote'), { text: 'written' }, signal())).toMatchObject({ ok: true, content: [{ type: 'text', text: 'written' }] });
    expect(h.manager.get('remote')).toMatchObject({ scope: 'mcp:tools mcp:write', wantedScope: null });
  });

  it('test_step_up_is_bounded_a_server_that_asks_again_for_scope_the_last_sign_in_asked_for_is_a_plain_refusal', async () => {
    // "mcp:admin" is not a scope the authorization server grants: asking for it again would not help.
    const remote = await server({ challengeScope: 'mcp:tools', callScope: 'mcp:admin' });
    const h = harness();
    await signedIn(h, 'remote', remote);
    expect(await h.manager.caller.callTool(echoRoute(h, 'remote'), { text: 'x' }, signal())).toMatchObject({ ok: false, errorCode: 'insufficient_scope' });
    await h.manager.login('remote', { openBrowser: playBrowser, timeoutMs: 20_000 });
    const again = await h.manager.caller.callTool(echoRoute(h, 'remote'), { text: 'x' }, signal());
    expect(again).toMatchObject({ ok: false, errorCode: 'forbidden' });
    expect(h.manager.get('remote')).toMatchObject({ health: 'error', lastErrorCode: 'forbidden', wantedScope: null });
    expect(remote.seen.authorizationScopes).toHaveLength(2);
  });

  it('test_refuses_a_401_whose_metadata_is_on_another_origin_or_whose_scope_is_malformed_before_any_browser_opens', async () => {
    const cases: Array<[string, RegExp]> = [
      ['Bearer resource_metadata="https://elsewhere.example/.well-known/oauth-protected-resource"', /protected resource metadata on another origin/],
      [`Bearer scope="mcp:${'x'.repeat(1100)}"`, /scope of \d+ characters, more than 1024/],
      ['Bearer scope="mcp\tread"', /scope with characters a scope cannot hold/],
    ];
    for (const [header, message] of cases) {
      const fake = await challengingServer(header);
      const h = harness();
      await h.manager.add({ transport: 'http', name: 'odd', url: fake.url });
      let opened = 0;
      await expect(h.manager.login('odd', { openBrowser: async () => void (opened += 1), timeoutMs: 5_000 }), header).rejects.toMatchObject({ code: 'signin_rejected', message: expect.stringMatching(message) });
      expect(opened).toBe(0);
      expect(fake.requests.some((path) => path.includes('well-known'))).toBe(false);
    }
  });

  it('test_a_pre_registered_client_signs_in_without_registering_its_secret_goes_to_the_keychain_only', async () => {
    const preRegistered = { clientId: 'ward-desktop', clientSecret: 'pre-registered-secret-canary-7c1e' };
    const remote = await server({ preRegistered });
    const h = harness();
    await h.manager.add({ transport: 'http', name: 'remote', url: remote.url, clientId: preRegistered.clientId }, {}, preRegistered.clientSecret);
    await h.manager.login('remote', { openBrowser: playBrowser, timeoutMs: 20_000 });
    await h.manager.discover('remote');
    expect(remote.counts).toMatchObject({ registrations: 0, codeGrants: 1 });
    expect(remote.seen.tokenClientAuth).toEqual(['basic']);
    expect(await h.manager.caller.callTool(echoRoute(h, 'remote'), { text: 'pre' }, signal())).toMatchObject({ ok: true });
    expect(h.manager.get('remote').spec).toMatchObject({ clientId: 'ward-desktop' });
    expect(await openSecretStore(h.core.home, h.ns, { kind: 'keychain' }).get(oauthAccounts('remote').clientSecret)).toBe(preRegistered.clientSecret);
    expect(databaseBytes(h).includes(preRegistered.clientSecret)).toBe(false);

    await h.manager.remove('remote');
    expect(await openSecretStore(h.core.home, h.ns, { kind: 'keychain' }).get(oauthAccounts('remote').clientSecret)).toBeUndefined();
  });
});

/** A server answering every request 401 with the given WWW-Authenticate; records the paths asked for. */
async function challengingServer(header: string): Promise<{ url: string; requests: string[] }> {
  const requests: string[] = [];
  const http = await import('node:http');
  const fake = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    res.writeHead(401, { 'www-authenticate': header }).end();
  });
  await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
  servers.push({ close: () => new Promise<void>((resolve) => fake.close(() => resolve())) });
  return { url: `http://127.0.0.1:${(fake.address() as { port: number }).port}/mcp`, requests };
}

describe('how Ward gets a client id and finds an older server\'s endpoints', () => {
  const CLIENT_METADATA_URL = 'https://it.example.com/ward/client-metadata.json';

  it('test_presents_the_configured_client_id_metadata_document_where_the_authorization_server_supports_it_instead_of_registering', async () => {
    const remote = await startSimpleAuthServer('cimd');
    servers.push(remote);
    const h = harness();
    fs.writeFileSync(`${h.core.home}/settings.json`, JSON.stringify({ clientMetadataUrl: CLIENT_METADATA_URL }));
    const app = new WardApp({ folder: h.core, env: {}, policy: null, connectionStore: { kind: 'keychain' } });
    const connections = await app.connections();
    const store = h.core.store(h.ns);
    await connections.add(store, { transport: 'http', name: 'remote', url: remote.url });
    await connections.signIn(store, 'remote', { openBrowser: playBrowser, timeoutMs: 20_000 });
    expect(remote.authorizations).toEqual([CLIENT_METADATA_URL]);
    expect(remote.registrations).toBe(0);
    expect((await connections.check(store, 'remote')).health).toBe('ok');

    // Without a configured document, the same server is registered with, as before.
    const other = harness();
    await other.manager.add({ transport: 'http', name: 'remote', url: remote.url });
    await other.manager.login('remote', { openBrowser: playBrowser, timeoutMs: 20_000 });
    expect(remote.registrations).toBe(1);
    expect(remote.authorizations.at(-1)).toBe('registered-1');
  });

  it('test_refuses_a_configured_client_metadata_url_that_is_not_https_with_a_path', async () => {
    const h = harness();
    const app = new WardApp({ folder: h.core, env: {}, policy: null, connectionStore: { kind: 'keychain' } });
    for (const bad of ['http://it.example.com/ward.json', 'https://it.example.com/', 'https://user@it.example.com/ward.json']) {
      fs.writeFileSync(`${h.core.home}/settings.json`, JSON.stringify({ clientMetadataUrl: bad }));
      await expect((await app.connections()).list(h.core.store(h.ns)), bad).rejects.toMatchObject({ code: 'invalid_config', message: expect.stringMatching(/"clientMetadataUrl" must be an https URL with a path/) });
    }
  });

  it('test_signs_in_to_a_2025_03_26_server_without_any_metadata_at_its_own_authorize_token_and_register', async () => {
    const legacy = await startSimpleAuthServer('legacy');
    servers.push(legacy);
    const h = harness();
    await signedIn(h, 'old', legacy);
    expect(legacy.registrations).toBe(1);
    expect(legacy.paths).toEqual(expect.arrayContaining(['/register', '/authorize', '/token']));
    expect(await h.manager.caller.callTool(echoRoute(h, 'old'), { text: 'from 2025' }, signal())).toMatchObject({ ok: true });
  });
});
