/**
 * Issue 31: with no grant flag Bash is not offered, and the person saw only
 * `← Bash error (tool_error) 134 B`. Now the person reads one line naming the grant that would
 * offer it and the CLI's reason, and the model is told in its instructions why the tool is not
 * there. The built `ward`, the real pinned CLI, the scripted provider.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startModelProvider, toolResultsSeen, type ModelProvider } from '../fixtures/model-provider/provider.js';
import { tempDir } from '../support/temp.js';
import { ward } from '../support/ward-cli.js';

let provider: ModelProvider | undefined;
afterEach(async () => {
  await provider?.close();
  provider = undefined;
});

function systemText(request: ModelProvider['requests'][number]): string {
  return JSON.stringify(request.body?.system ?? '');
}

describe('a tool the run does not offer', () => {
  it('test_the_person_reads_the_grant_that_would_offer_it_and_the_reason_and_the_model_is_told_why', async () => {
    const home = tempDir();
    fs.writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ credentialStore: 'file' }));
    provider = await startModelProvider([{ blocks: [{ type: 'tool_use', name: 'Bash', input: { command: 'ls -la', description: 'list' } }] }, { blocks: [{ type: 'text', text: 'done' }] }]);
    const env = { HOME: home, WARD_HOME: home, TMPDIR: home, ANTHROPIC_API_KEY: 'sk-ant-api03-ungranted-0000', WARD_MODEL_BASE_URL: provider.url, WARD_SANDBOX: 'off' };
    const result = await ward(['run', '--', 'list the files'], { env, timeoutMs: 60_000 });
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    // The CLI's reason, without its <tool_use_error> and <system-reminder> markup.
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}← Bash error \(tool_error\) \d+ B \d+ ms: No such tool available: Bash\. Bash is disabled for this session/));
    expect(result.stdout).not.toMatch(/tool_use_error|system-reminder/);
    // One line naming the grant that would offer it.
    expect(lines.filter((line) => line.includes('✗ Bash refused'))).toEqual(['  ✗ Bash refused: not offered to this run: an allow run grant would offer it (--allow-run=COMMAND, or Agents → Grant in the desktop)']);
    // The model was told which tools the run leaves out and which grant adds each, before it asked.
    const first = provider.conversationRequests()[0]!;
    expect(systemText(first)).toContain('Not offered in this run: Read, Glob, Grep (reading files; the person grants it with --allow-read=PATH); Edit, Write, NotebookEdit (changing files; the person grants it with --allow-write=PATH); Bash (running commands; the person grants it with --allow-run=COMMAND); WebFetch (fetching web pages; the person grants it with --allow-net=HOST).');
    expect(toolResultsSeen(provider)[0]!.isError).toBe(true);
  });

  it('test_a_granted_kind_is_not_named_as_missing_and_a_granted_tool_gets_no_refusal_line', async () => {
    const home = tempDir();
    fs.writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ credentialStore: 'file' }));
    provider = await startModelProvider([{ blocks: [{ type: 'tool_use', name: 'Bash', input: { command: 'true', description: 'nothing' } }] }, { blocks: [{ type: 'text', text: 'done' }] }]);
    const env = { HOME: home, WARD_HOME: home, TMPDIR: home, ANTHROPIC_API_KEY: 'sk-ant-api03-ungranted-0000', WARD_MODEL_BASE_URL: provider.url, WARD_SANDBOX: 'off' };
    const result = await ward(['run', '--allow-run=true', '--', 'do nothing'], { env, timeoutMs: 60_000 });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/← Bash ok /);
    expect(result.stdout).not.toContain('refused');
    const system = systemText(provider.conversationRequests()[0]!);
    expect(system).toContain('Not offered in this run: Read, Glob, Grep');
    expect(system).not.toContain('Bash (running commands');
  });
});
