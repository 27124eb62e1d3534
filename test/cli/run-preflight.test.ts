/**
 * A run that will be refused is refused before anything is created (issue 16 #7, #11): no
 * conversation, no run, no published agent, nothing sent to the model. Each refusal exits with
 * its documented code and names the exact command that fixes it, with the namespace.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { locatePlatformBinary } from '../../main/runner/pin.js';
import { startModelProvider, type ModelProvider } from '../fixtures/model-provider/provider.js';
import { tempDir } from '../support/temp.js';
import { ward, type WardResult } from '../support/ward-cli.js';

let provider: ModelProvider | undefined;
afterEach(async () => {
  await provider?.close();
  provider = undefined;
});

async function setup(extra: NodeJS.ProcessEnv = {}) {
  const dir = tempDir('ward-preflight-');
  const home = path.join(dir, 'home');
  fs.mkdirSync(home);
  fs.writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ credentialStore: 'file' }));
  provider = await startModelProvider([{ blocks: [{ type: 'text', text: 'never' }] }]);
  const env = { HOME: dir, TMPDIR: dir, WARD_HOME: home, WARD_MODEL_BASE_URL: provider.url, ...extra };
  return { home, run: (args: readonly string[]): Promise<WardResult> => ward(args, { env, timeoutMs: 60_000 }) };
}

/** Nothing was created in the namespace, and the model was never asked. */
async function expectNothingCreated(run: (args: readonly string[]) => Promise<WardResult>, ns: string): Promise<void> {
  expect((await run(['--namespace', ns, 'conversations'])).stdout).toBe(`no conversations in namespace ${ns} yet; start one with "ward --namespace ${ns} run -- PROMPT"\n`);
  expect((await run(['--namespace', ns, 'conversations', '--json'])).stdout).toBe('');
  expect((await run(['--namespace', ns, 'agents', 'list'])).stdout).toMatch(/^no agents in namespace \S+ yet/);
  expect(provider!.requests).toEqual([]);
}

describe('ward run refuses before anything is created', () => {
  it('test_without_a_model_credential_it_exits_5_naming_the_set_key_command_of_that_namespace', async () => {
    const { run } = await setup();
    expect((await run(['namespace', 'create', 'work'])).code).toBe(0);
    const refused = await run(['--namespace', 'work', 'run', '--', 'hello']);
    expect(refused.code).toBe(5);
    expect(refused.stderr).toBe('ward run: no model credential for namespace work: store one with "ward --namespace work provider set-key" (it reads the key from stdin), or set ANTHROPIC_API_KEY\n');
    expect(refused.stdout).toBe('');
    await expectNothingCreated(run, 'work');
  });

  it('test_with_a_pinned_cli_whose_hash_does_not_match_it_exits_7_and_creates_nothing', async () => {
    const { home, run } = await setup({ ANTHROPIC_API_KEY: 'sk-ant-api03-preflight-0000' });
    // The binary in node_modules is shared; Ward's record of its measured hash stands in for a changed binary.
    const { binary } = locatePlatformBinary();
    const stat = fs.statSync(binary);
    const measured = 'f'.repeat(64);
    fs.writeFileSync(path.join(home, 'cli-verified.json'), JSON.stringify({ records: [{ file: binary, fingerprint: { size: stat.size, mtimeMs: stat.mtimeMs, ino: stat.ino, ctimeMs: stat.ctimeMs }, sha256: measured }] }));
    const refused = await run(['run', '--', 'hello']);
    expect(refused.code).toBe(7);
    expect(refused.stderr).toMatch(new RegExp(`^ward run: the CLI at \\S+ has SHA-256 ${measured}, pinned [0-9a-f]{64}; refusing to run it\\n$`));
    await expectNothingCreated(run, 'default');
  });

  it('test_an_unknown_agent_exits_5_naming_the_agents_create_command_of_that_namespace_and_creates_nothing', async () => {
    const { run } = await setup({ ANTHROPIC_API_KEY: 'sk-ant-api03-preflight-0000' });
    const refused = await run(['run', '--agent', 'helper', '--', 'hello']);
    expect(refused.code).toBe(5);
    expect(refused.stderr).toBe('ward run: no agent named helper in namespace default; create it with "ward --namespace default agents create helper --instructions-file FILE"\n');
    await expectNothingCreated(run, 'default');
  });
});
