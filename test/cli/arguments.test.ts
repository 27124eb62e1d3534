/** Issue 12 #15: each malformed invocation gets a precise error or the documented behaviour. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { splitCommandLine } from '../../main/cli/command-line.js';
import { startModelProvider } from '../fixtures/model-provider/provider.js';
import { tempDir } from '../support/temp.js';
import { ward } from '../support/ward-cli.js';

describe('ward command line', () => {
  it('test_global_flags_before_the_command_are_accepted', async () => {
    expect(splitCommandLine(['--namespace', 'work', 'conversations', '--json'])).toEqual({ name: 'conversations', args: ['--namespace', 'work', '--json'] });
    expect(splitCommandLine(['--json', '-n', 'work', 'run', '--', '--help'])).toEqual({ name: 'run', args: ['--json', '-n', 'work', '--', '--help'] });
    const home = tempDir();
    expect((await ward(['namespace', 'create', 'work'], { env: { WARD_HOME: home } })).code).toBe(0);
    const listed = await ward(['--namespace', 'work', 'conversations'], { env: { WARD_HOME: home } });
    expect(listed).toMatchObject({ code: 0, stderr: '' });
  });

  it('test_version_names_ward_and_the_pinned_cli_without_a_home', async () => {
    const pkg = JSON.parse(fs.readFileSync(path.resolve('package.json'), 'utf8')) as { version: string; dependencies: Record<string, string> };
    for (const flag of ['--version', '-V', 'version']) {
      const result = await ward([flag], { env: { WARD_HOME: path.join(tempDir(), 'never-created') } });
      expect(result).toMatchObject({ code: 0, stderr: '', stdout: `ward ${pkg.version} (pinned Claude CLI ${pkg.dependencies['@anthropic-ai/claude-code']})\n` });
    }
  });

  it('test_help_after_the_double_dash_is_a_prompt_not_a_request_for_usage', async () => {
    const home = tempDir();
    const provider = await startModelProvider([{ blocks: [{ type: 'text', text: 'a reply' }] }]);
    try {
      const env = { WARD_HOME: home, WARD_SANDBOX: 'off', WARD_MODEL_BASE_URL: provider.url, ANTHROPIC_API_KEY: 'sk-ant-api03-unused', DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS };
      const result = await ward(['run', '--new', '--', '--help'], { env });
      expect(result.stdout).not.toContain('usage: ward run');
      expect(result.stderr).toMatch(/^ward: conversation [0-9a-f-]{36}, run /);
      expect(provider.conversationRequests()[0]!.rawBody).toContain('--help');
    } finally {
      await provider.close();
    }
  });

  it('test_run_help_says_where_the_model_is_which_key_is_used_and_the_grant_flags', async () => {
    // Issue 31: WARD_MODEL_BASE_URL appeared nowhere a newcomer would look.
    const result = await ward(['run', '--help'], { env: { WARD_HOME: path.join(tempDir(), 'never-created') } });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/^ {2}WARD_MODEL_BASE_URL {2}the Messages API endpoint/m);
    expect(result.stdout).toMatch(/^ {2}WARD_MODEL {11}the model name/m);
    expect(result.stdout).toContain('ward provider set-key');
    expect(result.stdout).toMatch(/ANTHROPIC_API_KEY or\n {2}CLAUDE_CODE_OAUTH_TOKEN/);
    expect(result.stdout).toContain('--allow-run=COMMANDS');
  });

  it('test_an_empty_or_repeated_namespace_is_a_usage_error', async () => {
    const home = tempDir();
    const empty = await ward(['conversations', '--namespace', ''], { env: { WARD_HOME: home } });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('--namespace needs a value, not an empty one');
    const twice = await ward(['conversations', '--namespace', 'a', '--namespace', 'b'], { env: { WARD_HOME: home } });
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain('--namespace is given more than once');
  });

  it('test_an_instructions_file_that_is_not_a_regular_file_is_refused_without_reading_it', async () => {
    const home = tempDir();
    const result = await ward(['agents', 'create', 'helper', '--instructions-file', '/dev/zero'], { env: { WARD_HOME: home }, timeoutMs: 10_000 });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('the instructions file /dev/zero is not a regular file');
  });

  it('test_a_ward_home_that_is_a_file_or_writable_by_others_is_refused_with_what_to_do', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'not-a-folder');
    fs.writeFileSync(file, 'x');
    const onFile = await ward(['conversations'], { env: { WARD_HOME: file } });
    expect(onFile.code).toBe(4);
    expect(onFile.stderr).toContain(`the data folder ${file} is a file, not a folder`);
    const below = await ward(['conversations'], { env: { WARD_HOME: path.join(file, 'sub') } });
    expect(below.code).toBe(4);
    expect(below.stderr).toContain('a file is in its path');
    const open = path.join(dir, 'open');
    fs.mkdirSync(open);
    fs.chmodSync(open, 0o777);
    const loose = await ward(['conversations'], { env: { WARD_HOME: open } });
    expect(loose.code).toBe(4);
    expect(loose.stderr).toContain(`run "chmod 700 ${open}"`);
    expect(fs.readdirSync(open)).toEqual([]);
  });
});
