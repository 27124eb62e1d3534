import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../main/cli/main.js';
import { DataFolder } from '../../main/store/data-folder.js';
import { probePolicy } from '../../main/policy/doctor-probe.js';
import { claudeManagedLocations, probeClaudeManagedSettings } from '../../main/policy/claude-managed.js';
import { policyFile } from '../support/system-policy.js';
import { tempDir } from '../support/temp.js';

describe('ward doctor: admin policy', () => {
  const core = new DataFolder(tempDir());

  it('test_no_policy_is_reported_as_not_configured', async () => {
    expect(await probePolicy({}, '2.1.328', 'linux')(core)).toMatchObject({ check: 'admin policy', status: 'not_configured', detail: 'no policy at /etc/ward/policy.json, /etc/ward/policy.d/*.json (a personal install)' });
  });

  it('test_a_valid_policy_is_summarized', async () => {
    const file = policyFile(JSON.stringify({ version: 1, forbid: ['run'], caps: { net: ['*.example.com'] }, allowedConnections: ['https://mcp.example.com/*'], cliVersions: ['2.1.328'], recommended: { sandbox: 'require' } }));
    expect(await probePolicy({ WARD_POLICY: file }, '2.1.328', 'linux', {})(core)).toEqual({
      check: 'admin policy',
      status: 'ok',
      detail: `${file}: 4 mandatory (cliVersions, forbid, caps, allowedConnections), 1 recommended (sandbox); "ward policy show" lists every key`,
    });
    const unknown = policyFile(JSON.stringify({ colour: 'blue' }));
    expect(await probePolicy({ WARD_POLICY: unknown }, '2.1.328', 'linux', {})(core)).toMatchObject({ status: 'warning', detail: expect.stringContaining(`${unknown}: colour: unknown key, ignored`) });
  });

  it('test_a_policy_allowing_only_a_cli_version_this_ward_does_not_carry_fails_the_doctor', async () => {
    const file = policyFile(JSON.stringify({ cliVersions: ['9.9.9'] }));
    expect(await probePolicy({ WARD_POLICY: file }, '2.1.328', 'linux', {})(core)).toEqual({
      check: 'admin policy',
      status: 'error',
      detail: 'cliVersions allows 9.9.9, but this Ward carries Claude CLI 2.1.328: every run is refused; install a Ward release that carries an allowed version',
    });
  });

  it('test_a_broken_policy_fails_the_doctor', async () => {
    const file = policyFile('{"version": 1, "forbid": ["ffi"]}');
    const stdout = new PassThrough();
    let out = '';
    stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const code = await main(['doctor', '--json'], { stdout, stderr: new PassThrough(), stdin: new PassThrough(), env: { WARD_HOME: tempDir(), WARD_POLICY: file } });
    const policy = out
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { check: string; status: string; detail: string })
      .find((check) => check.check === 'admin policy');
    expect(policy).toMatchObject({ status: 'error', detail: expect.stringContaining(`${file}: forbid: Invalid option`) });
    expect(code).toBe(1);
  });
});

describe('ward doctor: Claude Code managed settings the child CLI would load', () => {
  const core = new DataFolder(tempDir());

  it('test_none_found_is_ok_and_each_file_found_is_listed_by_keys_never_values', async () => {
    const dir = tempDir('claude-code-');
    expect(await probeClaudeManagedSettings({ dirs: [dir] })(core)).toEqual({ check: 'claude managed settings', status: 'ok', detail: `none (looked in ${dir}): the child CLI gets only the settings Ward gives it` });
    fs.writeFileSync(path.join(dir, 'managed-settings.json'), JSON.stringify({ permissions: { deny: ['Read(./.env)'] }, env: { SECRET_TOKEN: 'canary-value-123' } }));
    fs.mkdirSync(path.join(dir, 'managed-settings.d'));
    fs.writeFileSync(path.join(dir, 'managed-settings.d', '10-mcp.json'), '{ not json');
    const check = await probeClaudeManagedSettings({ dirs: [dir] })(core);
    expect(check).toMatchObject({ status: 'warning', detail: expect.stringContaining(`the child CLI applies these whatever --setting-sources says: ${dir}/managed-settings.json (keys: permissions, env); ${dir}/managed-settings.d/10-mcp.json (unreadable`) });
    expect(JSON.stringify(check)).not.toContain('canary-value-123');
  });

  it('test_locations_per_os_are_the_ones_the_pinned_cli_reads', () => {
    expect(claudeManagedLocations('linux').dirs).toEqual(['/etc/claude-code']);
    expect(claudeManagedLocations('darwin', 'alice')).toMatchObject({ dirs: ['/Library/Application Support/ClaudeCode'], plists: ['/Library/Managed Preferences/com.anthropic.claudecode.plist', '/Library/Managed Preferences/alice/com.anthropic.claudecode.plist'] });
    expect(claudeManagedLocations('win32')).toMatchObject({ dirs: ['C:\\Program Files\\ClaudeCode', 'C:\\ProgramData\\ClaudeCode'], registryKeys: ['HKEY_LOCAL_MACHINE\\SOFTWARE\\Policies\\ClaudeCode', 'HKEY_CURRENT_USER\\SOFTWARE\\Policies\\ClaudeCode'] });
  });
});
