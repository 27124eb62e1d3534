import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startProtectedServer, type ProtectedServer } from '../fixtures/mcp-oauth/protected-server.js';
import { tempDir } from '../support/temp.js';
import { ward } from '../support/ward-cli.js';
import { STDIO_SERVER, loginPlayingBrowser } from '../connections/support.js';

const servers: ProtectedServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

function env(home: string): NodeJS.ProcessEnv {
  return { WARD_HOME: home, DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS };
}

describe('ward connections', () => {
  it('test_adds_a_stdio_server_with_a_secret_from_stdin_lists_and_toggles_its_tools_and_removes_it', async () => {
    const home = path.join(tempDir(), 'home');
    const canary = `cli-secret-canary-${Date.now()}`;
    const added = await ward(['connections', 'add', 'files', '--command', process.execPath, '--arg', STDIO_SERVER, '--secret-env', 'API_TOKEN'], { env: env(home), input: `${canary}\n` });
    expect(added.stderr).toBe('');
    expect(added).toMatchObject({ code: 0, stdout: expect.stringMatching(/^added connection files\n/) });

    const tools = await ward(['connections', 'tools', 'files'], { env: env(home) });
    expect(tools.code, tools.stderr).toBe(0);
    expect(tools.stdout).toMatch(/^ {2}files__echo {2}on {2}Echoes text$/m);

    expect((await ward(['connections', 'tools', 'files', '--disable', 'echo'], { env: env(home) })).stdout).toMatch(/^ {2}files__echo {2}off/m);
    // The name the list shows is accepted too (issue 16 #9).
    expect((await ward(['connections', 'tools', 'files', '--enable', 'files__echo'], { env: env(home) })).stdout).toMatch(/^ {2}files__echo {2}on/m);
    expect((await ward(['connections', 'tools', 'files', '--disable', 'files__echo'], { env: env(home) })).stdout).toMatch(/^ {2}files__echo {2}off/m);
    const listed = await ward(['connections', 'list', '--json'], { env: env(home) });
    const view = JSON.parse(listed.stdout) as { name: string; secretEnv: string[]; health: string; tools: Array<{ name: string; enabled: boolean }> };
    expect(view).toMatchObject({ name: 'files', secretEnv: ['API_TOKEN'], health: 'ok' });
    expect(view.tools.find((tool) => tool.name === 'echo')).toMatchObject({ enabled: false });
    for (const output of [added, tools, listed]) expect(output.stdout + output.stderr).not.toContain(canary);

    expect(await ward(['connections', 'remove', 'files'], { env: env(home) })).toMatchObject({ code: 0 });
    expect(await ward(['connections', 'list'], { env: env(home) })).toMatchObject({ code: 0, stdout: expect.stringMatching(/^no connections in this namespace yet; add one with /) });
  });

  it('test_shows_the_last_lines_of_a_failing_stdio_servers_stderr_escaped_with_the_unavailable_exit_code', async () => {
    const home = path.join(tempDir(), 'home');
    expect(await ward(['connections', 'add', 'broken', '--command', process.execPath, '--arg', STDIO_SERVER, '--arg=--fail-start'], { env: env(home) })).toMatchObject({ code: 0 });
    const result = await ward(['connections', 'tools', 'broken'], { env: env(home) });
    expect(result.code).toBe(7);
    expect(result.stderr).toContain("the server's stderr (last 2 line(s)):\n  fixture stdio server started\n  fatal: missing configuration \\u{1b}[31mred\n");
    expect(result.stderr).toMatch(/\[closed\]/);
    expect((await ward(['connections', 'list'], { env: env(home) })).stdout).toMatch(/^broken {2}stdio {2}.* {2}error \(closed\) {2}tools 0\/0 on$/m);
  });

  // The desktop's Check refused it; this path called the connection manager itself and started the server.
  it('test_tools_of_a_connection_the_admin_policy_no_longer_allows_is_refused_and_the_server_is_not_started', async () => {
    const home = path.join(tempDir(), 'home');
    const marker = path.join(tempDir(), 'started');
    expect(await ward(['connections', 'add', 'files', '--command', process.execPath, '--arg', STDIO_SERVER, `--arg=--pid-file=${marker}`], { env: env(home) })).toMatchObject({ code: 0 });
    const policy = path.join(tempDir(), 'policy.json');
    fs.writeFileSync(policy, JSON.stringify({ allowedConnections: ['https://only.example/*'] }));
    for (const change of [[], ['--enable', 'echo'], ['--repin', 'echo']]) {
      const refused = await ward(['connections', 'tools', 'files', ...change], { env: { ...env(home), WARD_POLICY: policy } });
      expect(refused, change.join(' ')).toMatchObject({ code: 2, stderr: expect.stringContaining('connection "files" (') });
      expect(refused.stderr).toContain('is not allowed: it matches no allowedConnections entry');
    }
    expect(fs.existsSync(marker)).toBe(false);
    // Without the policy the same command starts it.
    expect(await ward(['connections', 'tools', 'files'], { env: env(home) })).toMatchObject({ code: 0 });
    expect(fs.existsSync(marker)).toBe(true);
  });

  it('test_fails_closed_on_bad_configuration_naming_the_field_with_the_usage_exit_code', async () => {
    const home = path.join(tempDir(), 'home');
    expect(await ward(['connections', 'add', 'remote', '--url', 'http://mcp.example.com/mcp'], { env: env(home) })).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/connection url: .*plain http to a non-loopback host.*--allow-insecure-http/),
    });
    expect(await ward(['connections', 'add', 'Bad_Name', '--url', 'https://mcp.example.com/mcp'], { env: env(home) })).toMatchObject({ code: 2, stderr: expect.stringMatching(/connection name: invalid connection name/) });
    expect(await ward(['connections', 'add', 'both', '--url', 'https://x.example/mcp', '--command', 'x'], { env: env(home) })).toMatchObject({ code: 2, stderr: expect.stringMatching(/exactly one of --command or --url/) });
    expect(await ward(['connections', 'add', 'keyed', '--command', 'x', '--secret-env', 'TOKEN'], { env: env(home), input: '' })).toMatchObject({ code: 2, stderr: expect.stringMatching(/expected 1 non-empty line/) });
    expect(await ward(['connections', 'list'], { env: env(home) })).toMatchObject({ code: 0, stdout: expect.stringMatching(/^no connections in this namespace yet/) });
  });

  it('test_signs_in_to_a_remote_server_lists_its_tools_and_after_revocation_says_to_sign_in_again_tokens_never_reach_stdout', async () => {
    const remote = await startProtectedServer();
    servers.push(remote);
    const home = path.join(tempDir(), 'home');
    expect(await ward(['connections', 'add', 'remote', '--url', remote.url], { env: env(home) })).toMatchObject({ code: 0 });
    const before = await ward(['connections', 'tools', 'remote'], { env: env(home) });
    expect(before).toMatchObject({ code: 5, stderr: expect.stringMatching(/not signed in.*ward connections login remote/) });

    const signedIn = await loginPlayingBrowser(env(home), 'remote');
    expect(signedIn, signedIn.stderr).toMatchObject({ code: 0, stdout: 'signed in to connection remote\n' });
    const tools = await ward(['connections', 'tools', 'remote', '--json'], { env: env(home) });
    expect(tools.code, tools.stderr).toBe(0);
    expect(JSON.parse(tools.stdout)).toMatchObject({ name: 'remote', health: 'ok' });

    await remote.revokeGrants();
    const after = await ward(['connections', 'tools', 'remote'], { env: env(home) });
    expect(after).toMatchObject({ code: 5, stderr: expect.stringMatching(/not signed in/) });
    const listed = await ward(['connections', 'list'], { env: env(home) });
    expect(listed.stdout).toMatch(/^remote {2}http {2}http:\/\/127\.0\.0\.1:\d+\/mcp {2}not signed in: sign in again with "ward --namespace default connections login remote"/m);

    const tokens = remote.authorizations.map((header) => header.replace(/^Bearer /, ''));
    expect(tokens.length).toBeGreaterThan(0);
    for (const output of [before, signedIn, tools, after, listed]) {
      for (const token of tokens) expect(output.stdout + output.stderr).not.toContain(token);
    }
  });

  it('test_a_pre_registered_client_its_secret_from_stdin_signs_in_and_a_step_up_shows_as_needing_more_access', async () => {
    const preRegistered = { clientId: 'ward-cli', clientSecret: `client-secret-canary-${Date.now()}` };
    const remote = await startProtectedServer({ preRegistered, callScope: 'mcp:write' });
    servers.push(remote);
    const home = path.join(tempDir(), 'home');
    expect(await ward(['connections', 'add', 'remote', '--url', remote.url, '--client-secret-stdin'], { env: env(home), input: 'x\n' })).toMatchObject({ code: 2, stderr: expect.stringMatching(/--client-secret-stdin needs --client-id/) });
    const added = await ward(['connections', 'add', 'remote', '--url', remote.url, '--client-id', preRegistered.clientId, '--client-secret-stdin'], { env: env(home), input: `${preRegistered.clientSecret}\n` });
    expect(added, added.stderr).toMatchObject({ code: 0 });
    expect(await loginPlayingBrowser(env(home), 'remote')).toMatchObject({ code: 0 });
    expect(remote.counts.registrations).toBe(0);
    expect(remote.seen.tokenClientAuth).toEqual(['basic']);
    const listed = JSON.parse((await ward(['connections', 'tools', 'remote', '--json'], { env: env(home) })).stdout) as Record<string, unknown>;
    expect(listed).toMatchObject({ name: 'remote', clientId: 'ward-cli', health: 'ok', wantedScope: null });

    // What a run sees when the server asks for more (the broker's caller), and what the list then says.
    const { WardApp } = await import('../../main/app/ward-app.js');
    const app = new WardApp({ home, env: {}, policy: null });
    const store = app.namespaces.fromFlag(undefined);
    const outcome = await (await app.connections()).use(store, (manager) => manager.caller.callTool(manager.routes().find((r) => r.exposedName === 'remote__echo')!, { text: 'x' }, new AbortController().signal));
    await app.close();
    expect(outcome).toMatchObject({ ok: false, errorCode: 'insufficient_scope' });
    const needs = await ward(['connections', 'list'], { env: env(home) });
    expect(needs.stdout).toMatch(/^remote {2}http {2}\S+ {2}needs more access: sign in again with "ward --namespace default connections login remote" to grant mcp:write {2}tools \d+\/\d+ on$/m);
    for (const output of [added, needs]) expect(output.stdout + output.stderr).not.toContain(preRegistered.clientSecret);
  });
});
