/**
 * A connection's server asks the person for input during a real `ward run` on a pseudo-terminal
 * (util-linux `script`): the built command, the real CLI, the scripted provider. The person
 * answers at the terminal; the model sees the tool's result and nothing of the request.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startModelProvider, toolResultsIn, type ModelProvider } from '../fixtures/model-provider/provider.js';
import { ELICITATION_MESSAGE } from '../fixtures/mcp-servers/tools.js';
import { CANARY_KEY } from '../app/runs/harness.js';
import { onTerminal } from '../support/pty.js';
import { tempDir } from '../support/temp.js';
import { REPO_ROOT, WARD_BIN, ward } from '../support/ward-cli.js';

const TYPED_SECRET = 'typed-api-key-canary-0d41';
let provider: ModelProvider | undefined;
afterEach(async () => {
  await provider?.close();
  provider = undefined;
});

describe('elicitation in a ward run', () => {
  it('test_the_person_answers_a_servers_form_at_the_terminal_the_model_sees_only_the_tool_result_and_no_record_keeps_the_secret_the_server_echoes', async () => {
    const root = fs.realpathSync(tempDir('ward-elicit-'));
    const home = path.join(root, 'home');
    fs.mkdirSync(home);
    fs.writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ credentialStore: 'file' }));
    provider = await startModelProvider([{ blocks: [{ type: 'tool_use', name: 'mcp__ward__fx__ask', input: { echo: true } }] }, { blocks: [{ type: 'text', text: 'thanks' }] }]);
    const env = { PATH: process.env.PATH, HOME: root, TMPDIR: root, WARD_HOME: home, ANTHROPIC_API_KEY: CANARY_KEY, WARD_MODEL_BASE_URL: provider.url, TERM: 'dumb' };
    const fixture = path.join(REPO_ROOT, 'test/fixtures/mcp-servers/stdio.ts');
    const tsx = import.meta.resolve('tsx');
    expect(await ward(['connections', 'add', 'fx', '--command', process.execPath, `--arg=--import=${tsx}`, '--arg', fixture], { env })).toMatchObject({ code: 0 });
    expect((await ward(['connections', 'tools', 'fx'], { env })).code).toBe(0);
    const instructions = path.join(root, 'instructions.md');
    fs.writeFileSync(instructions, 'Use the tools.');
    expect((await ward(['agents', 'create', 'helper', '--instructions-file', instructions, '--tool', 'fx/ask'], { env })).code).toBe(0);

    // Defaults for name, age, status and verified; the key; then accept.
    const { code, screen } = await onTerminal([process.execPath, WARD_BIN, 'run', '--agent', 'helper', '--', 'ask me'], {
      env,
      cwd: root,
      when: 'asks for input:',
      typed: `\r\r\r\r${TYPED_SECRET}\ra\r`,
      timeoutMs: 60_000,
    });
    expect(code, screen).toBe(0);
    expect(screen).toContain(`Ward: the server fx (agent helper, namespace default) asks for input:\r\n  ${ELICITATION_MESSAGE}`);
    expect(screen).toContain('ward: Request for input from `fx` — answered by you');

    // The model got the tool's own answer; neither the request nor what was typed, though the
    // server echoed the typed key back in its result.
    const toolResults = JSON.stringify(toolResultsIn(provider.conversationRequests()[1]!));
    expect(toolResults).toContain('accept: age,api_key,name,status,verified');
    expect(toolResults).toContain('\\"api_key\\":\\"[redacted]\\"');
    for (const request of provider.requests) {
      expect(request.rawBody).not.toContain(ELICITATION_MESSAGE);
      expect(request.rawBody).not.toContain(TYPED_SECRET);
    }
    const conversation = (JSON.parse((await ward(['conversations', '--json'], { env })).stdout.split('\n')[0]!) as { id: string }).id;
    const replay = await ward(['replay', conversation, '--json'], { env });
    const events = replay.stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; payload: Record<string, unknown> });
    expect(events.find((event) => event.type === 'elicitation_requested')?.payload).toMatchObject({ server: 'fx', mode: 'form', message: ELICITATION_MESSAGE, urlOrigin: null, continuesCall: false });
    expect(events.find((event) => event.type === 'elicitation_answered')?.payload).toMatchObject({
      action: 'accept',
      by: 'person',
      content: { name: 'John Doe', age: 30, status: 'active', verified: true, api_key: '[redacted]' },
    });
    expect(replay.stdout).not.toContain(TYPED_SECRET);
    // Nor the database (with its write-ahead log) or the CLI's own transcript of the conversation.
    const files = fs.readdirSync(home, { recursive: true, encoding: 'utf8' }).map((name) => path.join(home, name)).filter((file) => fs.statSync(file).isFile());
    expect(files.filter((file) => file.endsWith('.jsonl')).length).toBeGreaterThan(0);
    for (const file of files) expect(fs.readFileSync(file).includes(TYPED_SECRET), file).toBe(false);
  });
});
