/**
 * The file WARD_POLICY names is the user's own choice, so it may only narrow the admin's policy
 * (P6): through the built `ward` command, with the admin's policy at /etc/ward/policy.json.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { STDIO_SERVER, runnableHome } from '../connections/support.js';
import { underSystemPolicy } from '../support/system-policy.js';
import { ward } from '../support/ward-cli.js';

describe('WARD_POLICY may only narrow the admin policy', () => {
  it('test_a_managed_connection_declared_in_the_ward_policy_file_is_ignored_with_a_warning_never_listed_or_usable', async () => {
    const { dir, env, provider, instructions } = await runnableHome('ward-user-policy-');
    const under = underSystemPolicy({ reason: 'Example IT', managedConnectionsOnly: true });
    const mine = path.join(dir, 'mine.json');
    fs.writeFileSync(mine, JSON.stringify({ managedConnections: [{ name: 'evil', command: process.execPath, args: [STDIO_SERVER] }] }));
    const run = (args: readonly string[]) => ward(args, { env: { ...env, WARD_POLICY: mine }, under, timeoutMs: 90_000 });

    const listed = await run(['connections', 'list']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).not.toContain('evil');

    // The same server written into an agent is not a managed connection either: the run is refused.
    const created = await run(['agents', 'create', 'helper', '--instructions-file', instructions, '--upstream', `evil=${process.execPath} ${STDIO_SERVER}`, '--tool', 'evil/echo']);
    provider.push({ blocks: [{ type: 'tool_use', name: 'mcp__ward__evil__echo', input: { text: 'reached-evil' } }] }, { blocks: [{ type: 'text', text: 'done' }] });
    const used = created.code === 0 ? await run(['run', '--agent', 'helper', '--', 'echo please']) : created;
    expect(used.code).not.toBe(0);
    expect(used.stderr).toContain('only the managed connections may be used (managedConnectionsOnly): refused by Example IT');
    expect(JSON.stringify(provider.conversationRequests())).not.toContain('reached-evil');

    // What was ignored, and why, is shown.
    const shown = await run(['policy', 'show']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('Admin policy from /etc/ward/policy.json, ');
    expect(shown.stdout).toContain(`warning: ${mine}: managedConnections: ignored: a file WARD_POLICY names may only narrow the policy, and managedConnections adds to it; it comes only from the admin's sources`);
    expect(shown.stdout).toMatch(/^managedConnectionsOnly +true +mandatory +\/etc\/ward\/policy\.json: managedConnectionsOnly$/m);
  });
});

describe('the connection lists hold at run time', () => {
  it('test_a_connection_added_before_a_denied_connections_policy_is_refused_when_a_run_uses_it', async () => {
    const { env, provider, instructions } = await runnableHome('ward-denied-at-run-');
    const before = (args: readonly string[]) => ward(args, { env, timeoutMs: 90_000 });
    expect((await before(['connections', 'add', 'local', '--command', process.execPath, '--arg', STDIO_SERVER])).code).toBe(0);
    expect((await before(['connections', 'tools', 'local'])).code).toBe(0);
    const created = await before(['agents', 'create', 'helper', '--instructions-file', instructions, '--tool', 'local/echo']);
    expect(created.code, created.stderr).toBe(0);

    // Then the policy denies that server (a deny only narrows, so the user's own file may say it).
    const policy = path.join(path.dirname(instructions), 'policy.json');
    fs.writeFileSync(policy, JSON.stringify({ reason: 'Example IT', deniedConnections: [JSON.stringify([process.execPath, STDIO_SERVER])] }));
    provider.push({ blocks: [{ type: 'tool_use', name: 'mcp__ward__local__echo', input: { text: 'reached-denied' } }] }, { blocks: [{ type: 'text', text: 'done' }] });
    const run = await ward(['run', '--agent', 'helper', '--', 'echo please'], { env: { ...env, WARD_POLICY: policy }, timeoutMs: 90_000 });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain(`connection "local" (${JSON.stringify(`${process.execPath} ${STDIO_SERVER}`)}) is not allowed: it matches deniedConnections entry`);
    expect(JSON.stringify(provider.conversationRequests())).not.toContain('reached-denied');
  });
});
