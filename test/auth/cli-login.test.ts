import { describe, expect, it } from 'vitest';
import { openSession } from '../../main/auth/session.js';
import { followToCallback } from '../fixtures/oidc/provider.js';
import { tempDir } from '../support/temp.js';
import { authContext, expectNoCanary, expectNoCanaryInFiles, provider, runWard, spawnWard, wardEnv } from './support.js';

describe('ward login, whoami, logout', () => {
  it('test_signs_in_through_the_browser_shows_who_is_signed_in_revokes_on_logout_no_token_in_output_or_files', async () => {
    const idp = await provider();
    const home = tempDir();
    const env = wardEnv(home);
    const login = spawnWard(['login', '--issuer', idp.issuer, '--client-id', idp.clientId, '--no-browser', '--timeout', '60'], env);
    const [url] = await login.stderrMatch(/http:\/\/127\.0\.0\.1:\d+\/auth\?\S+/);
    const callback = await followToCallback(new URL(url));
    expect((await fetch(callback)).status).toBe(200);
    const signedIn = await login.done;
    expect(signedIn.stdout).toContain(`signed in to ${idp.issuer} as alice (namespace default)`);
    expect(signedIn.code).toBe(0);

    const who = await runWard(['whoami'], env);
    expect(who.code).toBe(0);
    expect(who.stdout).toContain(`alice at ${idp.issuer} (client ${idp.clientId}, namespace default)`);
    const whoJson = await runWard(['whoami', '--json'], env);
    expect(JSON.parse(whoJson.stdout)).toMatchObject({ namespace: 'default', issuer: idp.issuer, subject: 'alice', cleanupPending: false });

    const tokens = await openSession(authContext(home)).tokens();
    const canaries = [tokens.accessToken, tokens.refreshToken!, tokens.idToken!];
    const out = await runWard(['logout'], env);
    expect(out.stdout).toContain(`signed out alice at ${idp.issuer} (revoked at the provider)`);
    expect(out.code).toBe(0);
    expect(idp.counts.revocations).toBe(2);
    const after = await runWard(['whoami'], env);
    expect(after.code).toBe(5);
    expect(after.stderr).toContain('not signed in (namespace default); run "ward login');

    expectNoCanary([signedIn.stdout, signedIn.stderr, who.stdout, who.stderr, whoJson.stdout, out.stdout, out.stderr, after.stdout, after.stderr], canaries);
    expectNoCanaryInFiles(home, canaries);
  });

  it('test_refuses_a_non_loopback_http_issuer_without_the_explicit_override', async () => {
    const home = tempDir();
    const result = await runWard(['login', '--issuer', 'http://login.example.com', '--client-id', 'x', '--no-browser'], wardEnv(home));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('uses http on a non-loopback host; use https (an operator may override with --allow-insecure-http)');
  });

  it('test_refuses_a_namespace_that_does_not_exist_an_invalid_name_and_conflicting_namespace_sources', async () => {
    const home = tempDir();
    const missing = await runWard(['whoami', '--namespace', 'work'], wardEnv(home));
    expect(missing.code).toBe(5);
    expect(missing.stderr).toContain('no namespace work; create it with "ward namespace create work"');
    const invalid = await runWard(['whoami', '--namespace', 'Work/../x'], wardEnv(home));
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain('invalid namespace name "Work/../x": use lowercase letters, digits and "-", 1 to 32 characters');
    const conflict = await runWard(['whoami', '--namespace', 'work'], wardEnv(home, { WARD_NAMESPACE: 'personal' }));
    expect(conflict.code).toBe(2);
    expect(conflict.stderr).toContain('conflicting namespace settings');
  });
});
