/**
 * The terminal prompt of `ward run` on a real pseudo-terminal (util-linux `script`), answered
 * the way a person types, with the built command, the real CLI and the scripted provider.
 * (Hostile text in questions is tested on renderQuestion: the pinned CLI itself already refuses
 * file paths with control, bidi or zero-width characters before it asks Ward.)
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startModelProvider, type ModelProvider } from '../fixtures/model-provider/provider.js';
import { onTerminal } from '../support/pty.js';
import { tempDir } from '../support/temp.js';
import { ward } from '../support/ward-cli.js';

const WARD = path.resolve('bin/ward.js');
const SECRET = 'outside-canary-tty-8e8e';
let provider: ModelProvider | undefined;

afterEach(async () => {
  await provider?.close();
  provider = undefined;
});

/** Runs `ward run` on a pty and types `answer` + Enter when the question's choices appear. */
async function answerOnTerminal(
  fileName: string,
  answer: string,
  step: (file: string) => { name: string; input: Record<string, unknown> } = (file) => ({ name: 'Read', input: { file_path: file } }),
  grant = '--allow-read=./src',
  typed = `${answer}\r`,
  throughService = false,
): Promise<{ code: number | null; screen: string; modelSawSecret: boolean }> {
  const root = fs.realpathSync(tempDir('ward-tty-'));
  const home = path.join(root, 'home');
  const project = path.join(root, 'project');
  fs.mkdirSync(home);
  fs.mkdirSync(path.join(project, 'src'), { recursive: true });
  fs.writeFileSync(path.join(root, fileName), SECRET);
  fs.writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ credentialStore: 'file' }));
  provider = await startModelProvider([{ blocks: [{ type: 'tool_use', ...step(path.join(root, fileName)) }] }, { blocks: [{ type: 'text', text: 'finished' }] }]);
  // The prompt flow itself, unsandboxed: an approval at a prompt cannot widen a running OS sandbox
  // (the file stays invisible to the child; test/runner/sandbox.test.ts pins that down).
  const env = { PATH: process.env.PATH, HOME: home, TMPDIR: root, WARD_HOME: home, ANTHROPIC_API_KEY: 'sk-ant-canary-tty-0000', WARD_MODEL_BASE_URL: provider.url, TERM: 'dumb', WARD_SANDBOX: 'off' };
  // The background service lives in the login session's runtime folder: given one, `ward run` starts it and it runs the turn.
  const runtime = path.join(root, 'run-user');
  fs.mkdirSync(runtime, { mode: 0o700 });
  const serviceEnv = throughService ? { XDG_RUNTIME_DIR: runtime } : {};
  const argv = [process.execPath, WARD, 'run', ...(grant === '' ? [] : [grant]), '--', 'read the file'];
  const { code, screen } = await onTerminal(argv, { env: { ...env, ...serviceEnv }, cwd: project, when: '[d] deny', typed, timeoutMs: 30_000 });
  if (throughService) expect((await ward(['service', 'stop'], { env: { ...env, ...serviceEnv }, timeoutMs: 40_000 })).stdout).toBe('ward service: stopped (its turns were stopped first)\n');
  return { code, screen, modelSawSecret: provider.requests.some((request) => request.rawBody.includes(SECRET)) };
}

describe('ward run on a terminal', () => {
  it('test_allow_once_typed_at_the_prompt_lets_the_read_through', async () => {
    const result = await answerOnTerminal('secret.txt', 'o');
    expect(result.screen).toMatch(/Ward: agent default \(namespace default\) wants to read \/\S+\/secret\.txt/);
    expect(result.screen).toContain('[o] allow once  [c] allow for this conversation  [a] always allow for this agent in this namespace  [d] deny');
    // The time left, as the desktop shows it (the default 2 minutes, counted from when the run asked).
    expect(result.screen).toMatch(/\[d\] deny {2}\(answer within (2m 0s|1m 5\ds); no answer denies\)/);
    expect(result.modelSawSecret).toBe(true);
    expect(result.code).toBe(0);
  });

  it('test_through_the_background_service_the_question_is_asked_at_this_terminal_and_its_answer_holds', async () => {
    // The service runs the turn; its question comes back to the terminal that ran `ward run` (./src relative to it).
    const allowed = await answerOnTerminal('secret.txt', 'o', undefined, undefined, undefined, true);
    expect(allowed.screen).toContain('ward: started the background service');
    expect(allowed.screen).toMatch(/Ward: agent default \(namespace default\) wants to read \/\S+\/secret\.txt/);
    expect([allowed.modelSawSecret, allowed.code]).toEqual([true, 0]);
    const denied = await answerOnTerminal('secret.txt', 'd', undefined, undefined, undefined, true);
    expect(denied.screen).toContain('ward: denied Read');
    expect([denied.modelSawSecret, denied.code]).toEqual([false, 0]);
  });

  it('test_one_key_answers_without_enter', async () => {
    // Issue 31: `c` alone waited for Enter until the question timed out and denied.
    const result = await answerOnTerminal('secret.txt', 'c', undefined, undefined, 'c');
    expect(result.screen).toMatch(/\[d\] deny {2}\(answer within [^)]*\)\r?\n> c\r?\n/);
    expect(result.modelSawSecret).toBe(true);
    expect(result.screen).not.toContain('denied');
    expect(result.code).toBe(0);
  });

  it('test_deny_typed_at_the_prompt_keeps_the_file_from_the_model', async () => {
    const result = await answerOnTerminal('secret.txt', 'd');
    expect(result.modelSawSecret).toBe(false);
    expect(result.screen).toContain('ward: denied Read');
    expect(result.code).toBe(0);
  });

  it('test_a_command_hiding_its_tail_past_400_spaces_is_shown_whole_at_the_prompt_and_in_the_denial', async () => {
    // Issue 12 #4: `ls` + 400 spaces + `&& touch …` read as "wants to run ls" and `o` ran the hidden part.
    const result = await answerOnTerminal('pwned', 'd', (file) => ({ name: 'Bash', input: { command: `ls${' '.repeat(400)}&& touch ${file}-made`, description: 'list' } }), '--allow-run=ls');
    const question = result.screen.split('\n').find((line) => line.includes('command: ls'));
    expect(question).toMatch(/command: ls ⟨400 spaces⟩ && touch \/\S+\/pwned-made/);
    // The tool line shows the padding as the desktop's card does, not as 400 blanks.
    const tool = result.screen.split('\n').find((line) => line.includes('  tool: Bash'));
    // (The summary stops where it is cut; the command line above shows the command whole.)
    expect(tool).toMatch(/tool: Bash {2}\{"command":"ls ⟨118 spaces⟩ … \(442 chars\)","description":"list"\}/);
    expect(tool).not.toMatch(/ {3}/);
    expect(result.screen).toContain('[o] allow once  [d] deny');
    expect(result.screen).toMatch(/ward: denied Bash `ls ⟨400 spaces⟩ && touch \/\S+\/pwned-made`/);
    expect(result.code).toBe(0);
  });
});
