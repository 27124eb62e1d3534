/**
 * The built `ward run` with the sandbox: when Ward itself is SIGKILLed, bwrap's --die-with-parent
 * ends the CLI at once, before any later start could sweep it (R8 leaves less to clean up).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startModelProvider, type ModelProvider } from '../fixtures/model-provider/provider.js';
import { tempDir } from '../support/temp.js';
import { processesWith } from '../app/runs/agents.js';
import { CANARY_KEY } from '../app/runs/harness.js';
import { until } from '../support/wait.js';
import { WARD_BIN } from '../support/ward-cli.js';

let provider: ModelProvider | undefined;
let ward: ChildProcess | undefined;

afterEach(async () => {
  if (ward?.exitCode === null) ward.kill('SIGKILL');
  await provider?.close();
  provider = undefined;
});

describe('ward run in the sandbox, killed', () => {
  it('test_a_sigkilled_ward_takes_the_sandboxed_cli_with_it', async () => {
    provider = await startModelProvider([{ kind: 'hang', blocks: [{ type: 'text', text: 'Shown before the crash.' }] }]);
    const home = tempDir('ward-crash-home-');
    const tmp = tempDir('ward-crash-tmp-');
    fs.writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ credentialStore: 'file' }));
    const env = { PATH: process.env.PATH, HOME: home, TMPDIR: tmp, WARD_HOME: home, ANTHROPIC_API_KEY: CANARY_KEY, WARD_MODEL_BASE_URL: provider.url, WARD_SANDBOX: 'require' };
    ward = spawn(process.execPath, [WARD_BIN, 'run', '--json', '--', 'start something'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    ward.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    await until(() => stdout.includes('assistant_text'), 'the streamed text to be shown', 30_000);
    // bwrap and the CLI inside it name the run folder (under TMPDIR) in their command lines.
    const sandboxed = processesWith(tmp);
    expect(sandboxed.some((pid) => fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0]!.endsWith('bwrap'))).toBe(true);

    ward.kill('SIGKILL');
    await new Promise((resolve) => ward!.once('exit', resolve));
    await until(() => processesWith(tmp).length === 0, 'the sandboxed CLI to end with Ward', 10_000);
    expect(provider.conversationRequests()).toHaveLength(1);
  });
});
