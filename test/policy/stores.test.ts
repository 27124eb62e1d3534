import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compilePolicy, loadPolicy, readPolicy, type PolicyLocations } from '../../main/policy/policy.js';
import { parseRegQuery } from '../../main/policy/registry-store.js';
import { tempDir } from '../support/temp.js';
import { wardErrorOf } from '../support/errors.js';

const FIXTURES = path.resolve('test/fixtures/policy');
const HKLM = 'HKEY_LOCAL_MACHINE\\SOFTWARE\\Policies\\Ward';
const HKCU = 'HKEY_CURRENT_USER\\SOFTWARE\\Policies\\Ward';

/** /etc/ward as a temp folder: tests run as root, so files are root-owned as they would be. */
function etcWard(files: Record<string, unknown>): { locations: PolicyLocations; root: string } {
  const root = tempDir('ward-etc-');
  fs.chmodSync(root, 0o755);
  fs.mkdirSync(path.join(root, 'policy.d'), { mode: 0o755 });
  for (const [name, value] of Object.entries(files)) fs.writeFileSync(path.join(root, name), JSON.stringify(value), { mode: 0o644 });
  return { root, locations: { file: path.join(root, 'policy.json'), dir: path.join(root, 'policy.d') } };
}

/** The managed-preferences folder as MDM leaves it: root-owned plists from the fixtures. */
function managedPreferences(files: Record<string, string>): PolicyLocations {
  const root = tempDir('ward-mp-');
  fs.chmodSync(root, 0o755);
  const plists: string[] = [];
  for (const [name, fixture] of Object.entries(files)) {
    const file = path.join(root, name);
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o755 });
    fs.copyFileSync(path.join(FIXTURES, 'macos', fixture), file);
    fs.chmodSync(file, 0o644);
    plists.push(file);
  }
  return { plists };
}

function registry(outputs: Record<string, string | null>): PolicyLocations {
  return {
    registryKeys: Object.keys(outputs),
    regQuery: (key) => {
      const fixture = outputs[key];
      return fixture === null || fixture === undefined ? null : fs.readFileSync(path.join(FIXTURES, 'windows', fixture), 'utf8');
    },
  };
}

describe('admin policy on Linux: /etc/ward/policy.json and policy.d (real files)', () => {
  it('test_policy_json_and_drop_ins_merge_the_stricter_wins_mandatory_beats_recommended', () => {
    const { locations } = etcWard({
      'policy.json': { reason: 'Example IT', caps: { net: ['*.example.com'] }, approvalTimeoutSeconds: 300, recommended: { sandbox: 'auto', credentialStore: 'file' } },
      'policy.d/10-net.json': { caps: { net: ['api.example.com', 'evil.com'] }, forbid: ['run'], sandbox: 'require' },
      'policy.d/20-time.json': { approvalTimeoutSeconds: 600, recommended: { credentialStore: 'keychain' } },
      'policy.d/notes.txt': 'ignored: not .json',
    });
    const reading = readPolicy({}, 'linux', locations);
    expect(reading.errors).toEqual([]);
    const policy = compilePolicy(reading)!;
    expect(policy.caps.net).toEqual(['api.example.com']);
    expect([...policy.forbid]).toEqual(['run']);
    expect(reading.settings.get('approvalTimeoutSeconds')).toMatchObject({ value: 300, level: 'mandatory' });
    // A mandatory value in any source beats a recommended one; the first recommended one wins.
    expect(reading.settings.get('sandbox')).toMatchObject({ value: 'require', level: 'mandatory', sources: [`${locations.dir}/10-net.json: sandbox`] });
    expect(reading.settings.get('credentialStore')).toMatchObject({ value: 'file', level: 'recommended', sources: [`${locations.file}: recommended.credentialStore`] });
    expect(policy.sources).toEqual([locations.file, `${locations.dir}/10-net.json`, `${locations.dir}/20-time.json`]);
  });

  it('test_a_symlink_a_file_writable_by_others_one_not_owned_by_root_and_an_open_folder_are_refused', () => {
    const { root, locations } = etcWard({ 'elsewhere.json': { forbid: ['run'] } });
    fs.symlinkSync(path.join(root, 'elsewhere.json'), locations.file!);
    expect(readPolicy({}, 'linux', locations).errors).toEqual([`${locations.file}: is a symbolic link; an admin policy must be a regular file`]);
    fs.unlinkSync(locations.file!);

    fs.writeFileSync(path.join(locations.dir!, 'open.json'), '{}', { mode: 0o666 });
    fs.chmodSync(path.join(locations.dir!, 'open.json'), 0o666);
    expect(readPolicy({}, 'linux', locations).errors).toEqual([`${locations.dir}/open.json: is writable by group or others (mode 666)`]);
    fs.chmodSync(path.join(locations.dir!, 'open.json'), 0o644);
    fs.chownSync(path.join(locations.dir!, 'open.json'), 1000, 1000);
    expect(readPolicy({}, 'linux', locations).errors).toEqual([`${locations.dir}/open.json: is not owned by root (uid 1000)`]);
    fs.chownSync(path.join(locations.dir!, 'open.json'), 0, 0);
    fs.chmodSync(locations.dir!, 0o777);
    expect(readPolicy({}, 'linux', locations).errors).toEqual([`${locations.dir}: is writable by group or others (mode 777)`]);
    // Ward refuses to run rather than guess.
    expect(wardErrorOf(() => loadPolicy({}, 'linux', locations))).toMatchObject({ code: 'policy_invalid' });
  });

  it('test_ward_policy_cannot_weaken_sandbox_timeouts_or_file_store_it_only_adds_restrictions', () => {
    const { locations } = etcWard({ 'policy.json': { sandbox: 'require', approvalTimeoutSeconds: 60, allowFileCredentialStore: false, managedConnectionsOnly: true } });
    const mine = path.join(tempDir(), 'mine.json');
    fs.writeFileSync(mine, JSON.stringify({ sandbox: 'auto', approvalTimeoutSeconds: 3600, allowFileCredentialStore: true, managedConnectionsOnly: false }));
    const reading = readPolicy({ WARD_POLICY: mine }, 'linux', locations);
    expect(Object.fromEntries([...reading.settings].map(([key, setting]) => [key, setting.value]))).toEqual({
      managedConnectionsOnly: true,
      allowFileCredentialStore: false,
      sandbox: 'require',
      approvalTimeoutSeconds: 60,
    });
  });
});

describe('admin policy on macOS: managed preferences (recorded plist fixtures)', () => {
  it('test_recorded_binary_and_xml_plists_machine_then_user_merge_the_stricter_wins', () => {
    const locations = managedPreferences({ 'dev.ward.desktop.plist': 'dev.ward.desktop.plist', 'alice/dev.ward.desktop.plist': 'user-dev.ward.desktop.plist' });
    const reading = readPolicy({}, 'darwin', locations);
    expect(reading.errors).toEqual([]);
    const policy = compilePolicy(reading)!;
    expect(policy.reason).toBe('Example Corp IT (it@example.com)');
    expect(policy.cliVersions).toEqual(['2.1.328']);
    // Machine: *.example.com; user: api.example.com. Both allow only the latter.
    expect(policy.caps).toEqual({ net: ['api.example.com'], read: ['/Users/Shared/projects'] });
    expect(policy.requireSignedExports).toBe(true);
    expect(reading.settings.get('approvalTimeoutSeconds')).toMatchObject({ value: 60, level: 'mandatory' });
    // The user plist makes sandbox mandatory; the machine's recommendation of it gives way.
    expect(reading.settings.get('sandbox')).toMatchObject({ value: 'require', level: 'mandatory', sources: [`${locations.plists![1]}: sandbox`] });
    expect(reading.settings.get('credentialStore')).toMatchObject({ value: 'keychain', level: 'recommended' });
  });

  it('test_recorded_plist_with_wrong_types_fails_closed_naming_the_file_and_key', () => {
    const locations = managedPreferences({ 'dev.ward.desktop.plist': 'wrong-types.plist' });
    const [file] = locations.plists!;
    expect(readPolicy({}, 'darwin', locations).errors).toEqual([
      `${file}: approvalTimeoutSeconds: Invalid input: expected number, received string`,
      `${file}: managedConnectionsOnly: Invalid input: expected boolean, received number`,
    ]);
  });

  it('test_a_plist_that_is_not_a_dictionary_or_not_a_plist_is_refused', () => {
    const root = tempDir('ward-mp-');
    fs.chmodSync(root, 0o755);
    const file = path.join(root, 'dev.ward.desktop.plist');
    fs.writeFileSync(file, 'not a plist at all <', { mode: 0o644 });
    expect(readPolicy({}, 'darwin', { plists: [file] }).errors).toEqual([expect.stringMatching(new RegExp(`^${file}: is not a valid property list`))]);
  });
});

describe('admin policy on Windows: HKLM and HKCU (recorded reg query fixtures)', () => {
  it('test_recorded_reg_query_output_parses_keys_subkeys_and_types', () => {
    const keys = parseRegQuery(fs.readFileSync(path.join(FIXTURES, 'windows', 'hklm.txt'), 'utf8'));
    expect(keys.get(HKLM)).toContainEqual({ name: 'approvalTimeoutSeconds', type: 'REG_DWORD', data: '0x12c' });
    expect(keys.get(`${HKLM}\\caps\\net`)).toEqual([
      { name: '1', type: 'REG_SZ', data: '*.example.com' },
      { name: '2', type: 'REG_SZ', data: 'localhost:8080' },
    ]);
  });

  it('test_recorded_hklm_and_hkcu_hkcu_counts_only_where_stricter_recommended_from_its_subkey', () => {
    const reading = readPolicy({}, 'win32', registry({ [HKLM]: 'hklm.txt', [HKCU]: 'hkcu.txt' }));
    expect(reading.errors).toEqual([]);
    expect(reading.warnings).toEqual(['HKLM\\SOFTWARE\\Policies\\Ward: CustomSetting: unknown key, ignored']);
    const policy = compilePolicy(reading)!;
    expect(policy.caps).toEqual({ net: ['api.example.com'], run: ['git'] });
    expect(policy.providers).toEqual(['api.anthropic.com', 'api.example.com']);
    expect(policy.managedConnections).toEqual([{ name: 'tracker', url: 'https://mcp.example.com/mcp' }]);
    expect(policy.managedConnectionsOnly).toBe(true);
    // HKCU's sandbox "auto" does not lower HKLM's "require"; its shorter timeout does count.
    expect(reading.settings.get('sandbox')).toMatchObject({ value: 'require', level: 'mandatory' });
    expect(reading.settings.get('approvalTimeoutSeconds')).toMatchObject({ value: 60, sources: ['HKLM\\SOFTWARE\\Policies\\Ward: approvalTimeoutSeconds', 'HKCU\\SOFTWARE\\Policies\\Ward: approvalTimeoutSeconds'] });
    expect(reading.settings.get('credentialStore')).toMatchObject({ value: 'dpapi', level: 'recommended', sources: ['HKLM\\SOFTWARE\\Policies\\Ward\\Recommended: credentialStore'] });
  });

  it('test_recorded_reg_query_with_an_admx_value_out_of_range_and_wrong_types_fails_closed_naming_each_value', () => {
    expect(readPolicy({}, 'win32', registry({ [HKLM]: 'hklm-bad-values.txt', [HKCU]: null })).errors).toEqual([
      'HKLM\\SOFTWARE\\Policies\\Ward\\managedConnectionsOnly: is 2, expected 0 or 1',
      'HKLM\\SOFTWARE\\Policies\\Ward\\sandbox: is REG_DWORD, expected REG_SZ',
      'HKLM\\SOFTWARE\\Policies\\Ward\\managedConnections: is not valid JSON',
      'HKLM\\SOFTWARE\\Policies\\Ward: approvalTimeoutSeconds: Too big: expected number to be <=3600',
    ]);
  });

  it('test_no_policy_keys_means_no_policy_and_a_failing_reg_exe_fails_closed', () => {
    expect(loadPolicy({}, 'win32', registry({ [HKLM]: null, [HKCU]: null }))).toBeNull();
    const failing: PolicyLocations = {
      registryKeys: [HKLM],
      regQuery: () => {
        throw new Error('reg.exe timed out');
      },
    };
    expect(readPolicy({}, 'win32', failing).errors).toEqual([`${HKLM}: reg.exe timed out`]);
  });
});
