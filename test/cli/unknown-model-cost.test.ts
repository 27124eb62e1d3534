/**
 * The real pinned CLI prices a model outside its catalog at a default tier and reports that guess
 * as the turn's cost: Ward shows such a turn's tokens and "cost unknown", and totals say so.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CANARY_KEY } from '../app/runs/harness.js';
import { processesWith } from '../app/runs/agents.js';
import { startModelProvider, type ModelProvider } from '../fixtures/model-provider/provider.js';
import { ward } from '../support/ward-cli.js';

let provider: ModelProvider | undefined;
const scratch: string[] = [];

afterEach(async () => {
  for (const dir of scratch.splice(0)) {
    for (const pid of processesWith(dir)) process.kill(pid, 'SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  }
  await provider?.close();
  provider = undefined;
});

describe('the cost of a model the pinned CLI has no prices for', () => {
  it('test_a_real_run_of_an_unknown_model_shows_cost_unknown_not_the_clis_default_tier_guess', async () => {
    provider = await startModelProvider([{ blocks: [{ type: 'text', text: 'From the corporate model.' }], usage: { input_tokens: 200_000, output_tokens: 40_000 } }, { blocks: [{ type: 'text', text: 'From Sonnet.' }] }]);
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-cost-home-'));
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-cost-tmp-'));
    scratch.push(home, tmp);
    fs.writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ credentialStore: 'file' }));
    const env = { HOME: home, TMPDIR: tmp, WARD_HOME: home, ANTHROPIC_API_KEY: CANARY_KEY, WARD_MODEL_BASE_URL: provider.url };

    const first = await ward(['run', '--', 'say', 'hello'], { env: { ...env, WARD_MODEL: 'my-corp-model' }, timeoutMs: 60_000 });
    expect(first.code, first.stderr).toBe(0);
    const conversation = /conversation ([0-9a-f-]{36})/.exec(first.stderr)![1]!;
    const second = await ward(['run', '--conversation', conversation, '--', 'again'], { env: { ...env, WARD_MODEL: 'claude-sonnet-4-5' }, timeoutMs: 60_000 });
    expect(second.code, second.stderr).toBe(0);

    // The CLI did report a cost for the unknown model: a guess Ward must not pass on.
    const journal = (await ward(['replay', conversation, '--json'], { env })).stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; payload: { costUsd?: number | null } });
    const guessed = journal.filter((event) => event.type === 'usage').map((event) => event.payload.costUsd);
    expect(guessed[0]).toBeGreaterThan(0);
    const replay = (await ward(['replay', conversation], { env })).stdout;
    const turns = replay.split('\n').filter((line) => line.includes(' usage '));
    expect(turns[0]).toMatch(/usage {2}turn: \d+ in \/ \d+ out tokens, cost unknown$/);
    expect(turns[1]).toMatch(/usage {2}turn: \d+ in \/ \d+ out tokens, \$\d+\.\d{4}$/);
    expect(replay).toMatch(/\nTotal: 2 turns, .* tokens · \$\d+\.\d{4} \+ cost unknown for 1 turn\n$/);
    expect(replay).not.toContain(guessed[0]!.toFixed(4));
    const usage = (await ward(['usage'], { env })).stdout;
    expect(usage).toMatch(/^total +2 turns .* tokens · \$\d+\.\d{4} \+ cost unknown for 1 turn$/m);
  });
});
