import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import * as client from 'openid-client';
import { describe, expect, it } from 'vitest';
import { registryOf } from '../../main/auth/context.js';
import { signIn } from '../../main/auth/sign-in.js';
import { openSession, withAccessToken } from '../../main/auth/session.js';
import { followToCallback, type OidcFixture } from '../fixtures/oidc/provider.js';
import { tempDir } from '../support/temp.js';
import { REPO_ROOT } from '../support/ward-cli.js';
import { authContext, provider } from './support.js';
import type { AuthContext } from '../../main/auth/context.js';

async function signedIn(idp: OidcFixture, context: AuthContext): Promise<void> {
  await signIn(context, { issuer: idp.issuer, clientId: idp.clientId, openBrowser: async (url) => void (await fetch(await followToCallback(url))) });
}

async function revokeAtProvider(idp: OidcFixture, token: string, hint: 'refresh_token'): Promise<void> {
  const config = await client.discovery(new URL(idp.issuer), idp.clientId, undefined, client.None(), { execute: [client.allowInsecureRequests] });
  await client.tokenRevocation(config, token, { token_type_hint: hint });
}

const hash = (value: string) => createHash('sha256').update(value).digest('hex');

describe('refresh and the access-token wrapper', () => {
  it('test_rotates_the_refresh_token_on_refresh_and_stores_the_new_pair', async () => {
    const idp = await provider();
    const context = authContext(tempDir());
    await signedIn(idp, context);
    const session = openSession(context);
    const before = await session.tokens();
    const after = await session.refresh();
    expect(idp.counts.refreshGrants).toBe(1);
    expect(after.refreshToken).toBeDefined();
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect(after.accessToken).not.toBe(before.accessToken);
    expect(await session.tokens()).toEqual(after);
    // A caller that still holds the old pair gets the rotated one, without spending another refresh.
    expect(await session.refresh(before)).toEqual(after);
    expect(idp.counts.refreshGrants).toBe(1);
  });

  it('test_answers_a_401_with_one_refresh_and_one_retry_with_the_new_token', async () => {
    const idp = await provider();
    const context = authContext(tempDir());
    await signedIn(idp, context);
    const session = openSession(context);
    const first = await session.tokens();
    idp.rejectedTokens.add(first.accessToken);
    const used: string[] = [];
    const answer = await session.withAccessToken(async (token) => {
      used.push(token);
      return fetch(idp.resourceUrl, { headers: { authorization: `Bearer ${token}` } });
    });
    expect(answer.status).toBe(200);
    expect(used).toHaveLength(2);
    expect(used[0]).toBe(first.accessToken);
    expect(used[1]).toBe((await session.tokens()).accessToken);
    expect(idp.counts.refreshGrants).toBe(1);
  });

  it('test_stops_after_one_retry_when_the_resource_keeps_answering_401_unauthorized_no_third_call', async () => {
    const idp = await provider();
    const context = authContext(tempDir());
    await signedIn(idp, context);
    idp.rejectAllResourceCalls = true;
    await expect(withAccessToken(context, {}, (token) => fetch(idp.resourceUrl, { headers: { authorization: `Bearer ${token}` } }))).rejects.toMatchObject({ code: 'unauthorized' });
    expect(idp.counts.resourceCalls).toBe(2);
    expect(idp.counts.refreshGrants).toBe(1);
  });

  it('test_ends_the_session_when_the_provider_rejects_the_refresh_token_tokens_deleted_after_the_compare_registry_entry_gone', async () => {
    const idp = await provider();
    const context = authContext(tempDir());
    await signedIn(idp, context);
    const session = openSession(context);
    const tokens = await session.tokens();
    await revokeAtProvider(idp, tokens.refreshToken!, 'refresh_token');
    await expect(session.refresh()).rejects.toMatchObject({ code: 'not_signed_in', message: expect.stringContaining('token refresh: the identity provider refused (invalid_grant)') });
    expect(await context.store.get(session.account)).toBeUndefined();
    expect(registryOf(context).list()).toEqual([]);
  });

  it('test_two_processes_refreshing_the_same_session_at_once_rotate_it_once_and_agree_on_the_result', async () => {
    const idp = await provider();
    const home = tempDir();
    const context = authContext(home);
    await signedIn(idp, context);
    const goFile = path.join(home, 'go');
    const children = [0, 1].map(() => {
      const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'test', 'auth', 'refresh-child.ts'), home, 'default', goFile], {
        cwd: REPO_ROOT,
        env: { PATH: process.env.PATH, HOME: home, DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const ready = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('child not ready')), 30_000);
        child.stdout.on('data', () => stdout.includes('ready\n') && (clearTimeout(timer), resolve()));
      });
      const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
      return { ready, done };
    });
    await Promise.all(children.map((child) => child.ready));
    fs.writeFileSync(goFile, 'go');
    const results = await Promise.all(children.map((child) => child.done));
    for (const result of results) expect(result, result.stderr).toMatchObject({ code: 0 });
    const hashes = results.map((result) => (JSON.parse(result.stdout.split('\n')[1]!) as { access: string }).access);
    expect(idp.counts.refreshGrants).toBe(1);
    expect(hashes[0]).toBe(hashes[1]);
    const stored = await openSession(context).tokens();
    expect(hash(stored.accessToken)).toBe(hashes[0]);
    expect((await fetch(idp.resourceUrl, { headers: { authorization: `Bearer ${stored.accessToken}` } })).status).toBe(200);
  });
});
