/**
 * README's agent example `--upstream "files=node ./my-mcp-server.js"` (issue 16 #8): the relative
 * path is stored as the absolute path where the person published it, so `ward run` works from any
 * folder; a server that does not start is refused at publish and fails the run with the end of
 * its stderr, never a quiet "succeeded". `ward connections add --arg ./x` the same.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startModelProvider, type ModelProvider } from '../fixtures/model-provider/provider.js';
import { STDIO_SERVER } from '../connections/support.js';
import { tempDir } from '../support/temp.js';
import { ward, type WardResult } from '../support/ward-cli.js';

let provider: ModelProvider | undefined;
afterEach(async () => {
  await provider?.close();
  provider = undefined;
});

async function setup() {
  const root = fs.realpathSync(tempDir('ward-paths-'));
  const home = path.join(root, 'home');
  const project = path.join(root, 'project');
  const elsewhere = path.join(root, 'elsewhere');
  for (const dir of [home, project, elsewhere]) fs.mkdirSync(dir);
  fs.writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ credentialStore: 'file' }));
  // The person's own server next to their instructions (it loads the SDK fixture server).
  fs.writeFileSync(path.join(project, 'my-mcp-server.mjs'), `await import(${JSON.stringify(STDIO_SERVER)});\n`);
  fs.writeFileSync(path.join(project, 'helper.md'), 'Use echo when asked.');
  provider = await startModelProvider();
  const env = { HOME: root, TMPDIR: root, WARD_HOME: home, ANTHROPIC_API_KEY: 'sk-ant-api03-paths-0000', WARD_MODEL_BASE_URL: provider.url, WARD_SANDBOX: 'off' };
  const run = (cwd: string, args: readonly string[]): Promise<WardResult> => ward(args, { env, cwd, timeoutMs: 90_000 });
  return { project, elsewhere, run };
}

describe('relative paths of stdio servers', () => {
  it('test_an_agent_published_with_a_relative_server_path_runs_from_another_folder', async () => {
    const { project, elsewhere, run } = await setup();
    const created = await run(project, ['agents', 'create', 'helper', '--instructions-file', 'helper.md', '--upstream', 'files=node ./my-mcp-server.mjs', '--tool', 'files/echo']);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const shown = JSON.parse((await run(elsewhere, ['agents', 'show', 'helper', '--json'])).stdout) as { spec: { upstreams: { files: { command: string; args: string[] } } } };
    expect(shown.spec.upstreams.files).toMatchObject({ command: 'node', args: [path.join(project, 'my-mcp-server.mjs')] });

    provider!.push({ blocks: [{ type: 'tool_use', name: 'mcp__ward__files__echo', input: { text: 'from elsewhere' } }] }, { blocks: [{ type: 'text', text: 'It echoed.' }] });
    const ran = await run(elsewhere, ['run', '--agent', 'helper', '--', 'echo please']);
    expect(ran.stdout).toMatch(/← files__echo ok /);
    expect(ran.code, ran.stderr).toBe(0);
  });

  it('test_a_server_that_does_not_start_is_refused_at_publish_with_its_stderr_and_fails_a_run_the_same_way', async () => {
    const { project, elsewhere, run } = await setup();
    const refused = await run(project, ['agents', 'create', 'broken', '--instructions-file', 'helper.md', '--upstream', 'files=node ./missing-server.mjs', '--tool', 'files/*']);
    expect(refused.code).toBe(7);
    expect(refused.stderr).toMatch(/^ward agents: upstream files: the server did not start \(.+\); its stderr ended with: .*Cannot find module '[^']*missing-server\.mjs'/);
    expect(refused.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect((await run(project, ['agents', 'list'])).stdout).toMatch(/^no agents in namespace default yet/);

    // Published while the server worked; it is gone when the run starts it.
    expect((await run(project, ['agents', 'create', 'helper', '--instructions-file', 'helper.md', '--upstream', 'files=node ./my-mcp-server.mjs', '--tool', 'files/echo'])).code).toBe(0);
    fs.renameSync(path.join(project, 'my-mcp-server.mjs'), path.join(project, 'moved.mjs'));
    provider!.push({ blocks: [{ type: 'tool_use', name: 'mcp__ward__files__echo', input: { text: 'never' } }] }, { blocks: [{ type: 'text', text: 'never' }] });
    const failed = await run(elsewhere, ['run', '--agent', 'helper', '--', 'echo please']);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/ward: failed: upstream files: the server did not start \(.+\); its stderr ended with: .*Cannot find module '[^']*my-mcp-server\.mjs'/);
    expect(failed.stderr).not.toContain('may or may not have taken effect');
    expect(provider!.conversationRequests()).toEqual([]);
  });

  it('test_connections_add_stores_a_relative_argument_as_an_absolute_path', async () => {
    const { project, elsewhere, run } = await setup();
    expect((await run(project, ['connections', 'add', 'local', '--command', 'node', '--arg', './my-mcp-server.mjs'])).code).toBe(0);
    const listed = JSON.parse((await run(elsewhere, ['connections', 'list', '--json'])).stdout.trim()) as { command: string; args: string[] };
    expect(listed).toMatchObject({ command: 'node', args: [path.join(project, 'my-mcp-server.mjs')] });
    const tools = await run(elsewhere, ['connections', 'tools', 'local']);
    expect(tools.code, tools.stderr).toBe(0);
    expect(tools.stdout).toContain('echo');
  });
});
