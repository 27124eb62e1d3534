/** `ward run --allow-…` as a user types it: the built command, the real CLI, the scripted provider. */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startModelProvider, type ModelProvider } from '../fixtures/model-provider/provider.js';
import { tempDir } from '../support/temp.js';
import { ward } from '../support/ward-cli.js';

const CANARY_KEY = 'sk-ant-canary-perm-4c1d2e3f';
let provider: ModelProvider | undefined;

afterEach(async () => {
  await provider?.close();
  provider = undefined;
});

function setup() {
  const root = fs.realpathSync(tempDir('ward-run-perm-'));
  const home = path.join(root, 'home');
  const project = path.join(root, 'project');
  fs.mkdirSync(home);
  fs.mkdirSync(path.join(project, 'src'), { recursive: true });
  fs.writeFileSync(path.join(project, 'src', 'a.txt'), 'inside-canary-1a2b');
  fs.writeFileSync(path.join(root, 'secret.txt'), 'outside-canary-3c4d');
  fs.writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ credentialStore: 'file' }));
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: home, TMPDIR: root, WARD_HOME: home, ANTHROPIC_API_KEY: CANARY_KEY, WARD_MODEL_BASE_URL: provider?.url ?? '' };
  return { root, project, env };
}

describe('ward run permission flags', () => {
  it('test_relative_grants_resolve_against_the_current_folder_and_ungranted_reads_are_denied_without_a_tty', async () => {
    provider = await startModelProvider();
    const { root, project, env } = setup();
    provider.push(
      { blocks: [{ type: 'tool_use', name: 'Read', input: { file_path: path.join(project, 'src', 'a.txt') } }] },
      { blocks: [{ type: 'tool_use', name: 'Read', input: { file_path: path.join(root, 'secret.txt') } }] },
      { blocks: [{ type: 'text', text: 'read both' }] },
    );
    const run = await ward(['run', '--allow-read=./src', '--', 'read', 'files'], { env, cwd: project });
    expect(run.stderr).toMatch(/ward: succeeded/);
    expect(run.stderr).toContain(`ward: denied Read ${path.join(root, 'secret.txt')}: no grant covers read ${path.join(root, 'secret.txt')}, and no one can be asked\n`);
    expect(run.code).toBe(0);
    const bodies = JSON.stringify(provider.requests.map((request) => request.rawBody));
    expect(bodies).toContain('inside-canary-1a2b');
    expect(bodies).not.toContain('outside-canary-3c4d');

    const conversation = /conversation ([0-9a-f-]{36})/.exec(run.stderr)![1]!;
    const shown = await ward(['permissions', '--conversation', conversation, '--json'], { env, cwd: project });
    const decisions = shown.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; decision?: string; value?: string })
      .filter((line) => line.type === 'decision');
    expect(decisions.map((decision) => `${decision.decision} ${decision.value}`)).toEqual([`allow ${path.join(project, 'src', 'a.txt')}`, `deny ${path.join(root, 'secret.txt')}`]);
  });

  it('test_bad_flags_are_refused_before_anything_runs', async () => {
    provider = await startModelProvider();
    const { project, env } = setup();
    const all = await ward(['run', '--allow-all', '--', 'x'], { env, cwd: project });
    expect(all).toMatchObject({ code: 2, stderr: expect.stringContaining('Ward never grants everything to an agent') });
    const empty = await ward(['run', '--allow-read=a,,b', '--', 'x'], { env, cwd: project });
    expect(empty).toMatchObject({ code: 2, stderr: 'ward run: --allow-read: entry 2 of "a,,b" is empty\n' });
    const unknown = await ward(['run', '--allow-ffi=x', '--', 'x'], { env, cwd: project });
    expect(unknown.code).toBe(2);
    expect(provider.requests).toEqual([]);
  });

  it('test_a_net_grant_the_sandbox_could_not_take_is_refused_before_a_conversation_is_made', async () => {
    provider = await startModelProvider();
    const { project, env } = setup();
    const run = await ward(['run', '--allow-net=vm:8080', '--', 'x'], { env, cwd: project });
    expect(run).toMatchObject({
      code: 2,
      stderr: 'ward run: --allow-net: net entry "vm:8080": the sandbox\'s proxy takes a host name only with a dot in it (localhost aside): write "vm" as its full name (like vm.internal) or as its IP address\n',
    });
    const saved = await ward(['permissions', 'grant', '--defaults', '--allow-net=vm'], { env, cwd: project });
    expect(saved.code).toBe(2);
    expect(saved.stderr).toContain('net entry "vm": the sandbox\'s proxy takes a host name only with a dot in it');
    expect(provider.requests).toEqual([]);
    const conversations = await ward(['conversations'], { env, cwd: project });
    expect(conversations.stdout).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/);
  });

  it('test_a_grant_beyond_the_admin_cap_is_refused_with_its_reason', async () => {
    provider = await startModelProvider();
    const { root, project, env } = setup();
    const policy = path.join(root, 'policy.json');
    fs.writeFileSync(policy, JSON.stringify({ version: 1, reason: 'Example Corp IT', forbid: ['run'] }));
    const refused = await ward(['run', '--allow-run=git', '--', 'x'], { env: { ...env, WARD_POLICY: policy }, cwd: project });
    expect(refused).toMatchObject({ code: 2, stderr: 'ward run: run grants are forbidden (run git): refused by Example Corp IT\n' });
    fs.writeFileSync(policy, '{"version": 1, "caps": ');
    const broken = await ward(['run', '--', 'x'], { env: { ...env, WARD_POLICY: policy }, cwd: project });
    expect(broken.code).toBe(7);
    expect(broken.stderr).toContain(`the admin policy is not valid: ${policy}: is not valid JSON`);
    expect(provider.requests).toEqual([]);
  });
});
