import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { check, makeRequest, netRequestForUrl } from '../../main/permissions/engine.js';
import { parsePermissionFlags } from '../../main/permissions/grants.js';
import {
  PolicyGate,
  assertCliVersionAllowed,
  assertConnectionAllowed,
  assertModelAllowed,
  assertExportAllowed,
  assertProviderAllowed,
  assertRulesAllowed,
  loadPolicy,
  parsePolicy,
  systemPolicyLocations,
  assertRuleAllowed,
  type PolicyLocations,
} from '../../main/policy/policy.js';
import { tempDir } from '../support/temp.js';
import { wardErrorOf } from '../support/errors.js';

function writePolicy(value: unknown, mode = 0o644, name = 'policy.json'): string {
  const file = path.join(tempDir('ward-policy-'), name);
  fs.writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
  fs.chmodSync(file, mode);
  return file;
}

const REASON = 'Example Corp IT (it@example.com)';
/** Only WARD_POLICY: no system store. */
const NONE: PolicyLocations = {};
/** A system policy file at `file`, with a drop-in folder beside it. */
function at(file: string): PolicyLocations {
  return { file, dir: path.join(path.dirname(file), 'policy.d') };
}

describe('admin policy', () => {
  it('test_system_locations_per_os_never_from_the_environment', () => {
    expect(systemPolicyLocations('linux')).toEqual({ file: '/etc/ward/policy.json', dir: '/etc/ward/policy.d' });
    // Managed preferences only (MDM writes them as root), never ~/Library/Preferences.
    expect(systemPolicyLocations('darwin', 'alice').plists).toEqual(['/Library/Managed Preferences/dev.ward.desktop.plist', '/Library/Managed Preferences/alice/dev.ward.desktop.plist']);
    expect(systemPolicyLocations('win32').registryKeys).toEqual(['HKEY_LOCAL_MACHINE\\SOFTWARE\\Policies\\Ward', 'HKEY_CURRENT_USER\\SOFTWARE\\Policies\\Ward']);
  });

  it('test_ward_policy_cannot_lift_the_admin_policy_it_only_adds_restrictions', () => {
    const admin = writePolicy({ version: 1, reason: REASON, forbid: ['run'], caps: { net: ['*.example.com'] } });
    // A user-owned file that allows everything: merged, the admin's limits still hold.
    const mine = writePolicy({ version: 1, reason: 'me' });
    const merged = loadPolicy({ WARD_POLICY: mine }, 'linux', at(admin))!;
    expect([...merged.forbid]).toEqual(['run']);
    expect(wardErrorOf(() => assertRuleAllowed(merged, { effect: 'allow', kind: 'run', value: 'ls', source: 'flag' })).code).toBe('policy_refused');
    expect(wardErrorOf(() => assertRuleAllowed(merged, { effect: 'allow', kind: 'net', value: 'evil.com', source: 'flag' })).code).toBe('policy_refused');
    // A stricter one narrows further.
    const stricter = writePolicy({ version: 1, reason: 'me', forbid: ['write'], caps: { net: ['api.example.com'] } });
    const narrowed = loadPolicy({ WARD_POLICY: stricter }, 'linux', at(admin))!;
    expect([...narrowed.forbid].sort()).toEqual(['run', 'write']);
    expect(narrowed.caps.net).toEqual(['api.example.com']);
  });

  it('test_two_sources_disagreeing_on_a_mandatory_key_fail_closed_naming_both', () => {
    const admin = writePolicy({ namespace: 'work', cliVersions: ['2.1.328'] });
    const mine = writePolicy({ namespace: 'home' });
    expect(wardErrorOf(() => loadPolicy({ WARD_POLICY: mine }, 'linux', at(admin)))).toMatchObject({
      code: 'policy_invalid',
      message: `the admin policy is not valid: namespace: ${admin}: namespace sets "work" but ${mine}: namespace sets "home"; the sources must agree on namespace; Ward refuses to run until it is fixed (ask whoever manages this computer)`,
    });
    const agreeing = writePolicy({ namespace: 'work', credentialStore: 'keychain' });
    expect(loadPolicy({ WARD_POLICY: agreeing }, 'linux', at(admin))).toMatchObject({ namespace: 'work', cliVersions: ['2.1.328'] });
  });

  it('test_a_client_metadata_document_set_by_one_source_applies_two_different_ones_fail_closed_and_it_must_be_https', () => {
    const admin = writePolicy({ clientMetadataUrl: 'https://it.example.com/ward.json' });
    const plain = writePolicy({ cliVersions: ['2.1.328'] });
    const personal = writePolicy({ clientMetadataUrl: 'https://me.example.com/ward.json' });
    expect(loadPolicy({ WARD_POLICY: plain }, 'linux', at(admin))?.clientMetadataUrl).toBe('https://it.example.com/ward.json');
    expect(loadPolicy({ WARD_POLICY: personal }, 'linux', at(plain))?.clientMetadataUrl).toBe('https://me.example.com/ward.json');
    expect(wardErrorOf(() => loadPolicy({ WARD_POLICY: personal }, 'linux', at(admin)))).toMatchObject({ code: 'policy_invalid', message: expect.stringContaining('the sources must agree on clientMetadataUrl') });
    expect(wardErrorOf(() => parsePolicy(JSON.stringify({ clientMetadataUrl: 'http://it.example.com/ward.json' }), 'p'))).toMatchObject({ code: 'policy_invalid', message: expect.stringContaining('clientMetadataUrl') });
  });

  it('test_signed_exports_stay_required_when_either_policy_requires_them_and_refuse_transcripts', () => {
    const strictFile = writePolicy({ reason: 'Example IT', requireSignedExports: true });
    const laxFile = writePolicy({ requireSignedExports: false });
    const strict = loadPolicy({ WARD_POLICY: strictFile }, 'linux', at(laxFile))!;
    expect(strict.requireSignedExports).toBe(true);
    expect(loadPolicy({ WARD_POLICY: laxFile }, 'linux', {})!.requireSignedExports).toBe(false);
    expect(() => assertExportAllowed(strict, 'bundle')).not.toThrow();
    expect(wardErrorOf(() => assertExportAllowed(strict, 'markdown'))).toMatchObject({ code: 'policy_refused', message: 'an export as markdown carries no signature, and every export must be signed; export a bundle: refused by Example IT' });
    expect(() => assertExportAllowed(null, 'html')).not.toThrow();
  });

  it('test_no_policy_file_at_the_system_location_means_no_policy', () => {
    expect(loadPolicy({}, 'linux', at(path.join(tempDir(), 'absent.json')))).toBeNull();
  });

  it('test_ward_policy_naming_a_missing_file_fails_closed', () => {
    const file = path.join(tempDir(), 'absent.json');
    expect(wardErrorOf(() => loadPolicy({ WARD_POLICY: file }, 'linux', NONE))).toMatchObject({ code: 'policy_invalid', message: expect.stringContaining(`the admin policy is not valid: ${file}: cannot be read`) });
  });

  it('test_malformed_json_fails_closed_naming_the_file', () => {
    const file = writePolicy('{"version": 1,');
    expect(wardErrorOf(() => loadPolicy({ WARD_POLICY: file }, 'linux', NONE))).toMatchObject({ code: 'policy_invalid', message: expect.stringContaining(`${file}: is not valid JSON`) });
  });

  it('test_wrong_types_fail_closed_naming_the_source_and_key_unknown_keys_are_warnings', () => {
    expect(wardErrorOf(() => parsePolicy(JSON.stringify({ version: 1, forbid: ['ffi'] }), 'p')).message).toContain('p: forbid: Invalid option: expected one of');
    expect(wardErrorOf(() => parsePolicy(JSON.stringify({ version: 2 }), 'p')).message).toContain('p: "version" must be 1 (got 2)');
    expect(wardErrorOf(() => parsePolicy(JSON.stringify({ version: 1, caps: { read: ['relative/path'] } }), 'p')).message).toContain('p: caps: must be an absolute path at read.0');
    expect(wardErrorOf(() => parsePolicy(JSON.stringify({ version: 1, caps: { net: ['https://x.com'] } }), 'p')).message).toContain('p: caps: a host is host, host:port or *.domain (no scheme, path or allow-all) at net.0');
    expect(wardErrorOf(() => parsePolicy(JSON.stringify({ approvalTimeoutSeconds: 5 }), 'p')).message).toContain('p: approvalTimeoutSeconds: Too small: expected number to be >=10');
    // Unknown keys are shown, not fatal; a recommended cap would be a limit the user could lift.
    expect(parsePolicy(JSON.stringify({ version: 1, allowAll: true, recommended: { colour: 'blue' } }), 'p').warnings).toEqual(['p: allowAll: unknown key, ignored', 'p: recommended.colour: unknown key, ignored']);
    expect(wardErrorOf(() => parsePolicy(JSON.stringify({ recommended: { caps: { net: ['x.com'] } } }), 'p')).message).toContain('p: recommended.caps: caps can only be mandatory');
  });

  it('test_the_retired_connections_key_fails_closed_it_matched_by_name', () => {
    expect(wardErrorOf(() => parsePolicy(JSON.stringify({ version: 1, connections: ['github'] }), 'p')).message).toContain(
      'p: connections: "connections" matched connections by the name a user gives them, which anyone can choose; list the servers by URL or command in "allowedConnections" instead',
    );
  });

  it('test_a_policy_writable_by_others_is_refused', () => {
    const file = writePolicy({ version: 1 }, 0o666);
    expect(wardErrorOf(() => loadPolicy({ WARD_POLICY: file }, 'linux', NONE)).message).toContain(`${file}: is writable by group or others (mode 666)`);
  });

  it('test_a_well_formed_policy_loads', () => {
    const file = writePolicy({ version: 1, reason: REASON, namespace: 'work', forbid: ['run'], caps: { net: ['*.example.com'] } });
    const policy = loadPolicy({ WARD_POLICY: file }, 'linux', NONE)!;
    expect(policy.namespace).toBe('work');
    expect([...policy.forbid]).toEqual(['run']);
    expect(policy.caps.net).toEqual(['*.example.com']);
  });

  it('test_a_grant_beyond_the_cap_is_refused_with_the_policy_reason', () => {
    const root = fs.realpathSync(tempDir());
    fs.mkdirSync(path.join(root, 'allowed'));
    const policy = parsePolicy(JSON.stringify({ version: 1, reason: REASON, caps: { read: [path.join(root, 'allowed')] } }), 'p');
    assertRulesAllowed(policy, parsePermissionFlags([`--allow-read=${path.join(root, 'allowed', 'sub')}`], root));
    const error = wardErrorOf(() => assertRulesAllowed(policy, parsePermissionFlags([`--allow-read=${root}`], root)));
    expect(error).toEqual({ code: 'policy_refused', message: `read ${root} is beyond the allowed read cap (${path.join(root, 'allowed')}): refused by ${REASON}` });
  });

  it('test_forbidden_kinds_are_refused_and_deny_rules_always_pass', () => {
    const policy = parsePolicy(JSON.stringify({ version: 1, reason: REASON, forbid: ['run'] }), 'p');
    expect(wardErrorOf(() => assertRulesAllowed(policy, parsePermissionFlags(['--allow-run=git'], '/'))).message).toBe(`run grants are forbidden (run git): refused by ${REASON}`);
    assertRulesAllowed(policy, parsePermissionFlags(['--deny-run=git'], '/'));
  });

  it('test_net_cap_containment', () => {
    const policy = parsePolicy(JSON.stringify({ version: 1, caps: { net: ['*.example.com', 'localhost:8080'] } }), 'p');
    assertRulesAllowed(policy, parsePermissionFlags(['--allow-net=a.example.com,*.b.example.com,a.example.com:443,localhost:8080'], '/'));
    for (const entry of ['example.com', '*.com.example.com.evil', 'localhost', 'localhost:9090', 'other.com']) {
      expect(() => assertRulesAllowed(policy, parsePermissionFlags([`--allow-net=${entry}`], '/')), entry).toThrow(/beyond the allowed net cap/);
    }
  });

  it('test_mcp_caps_and_allowed_connections_by_url_or_command_never_by_name', () => {
    const policy = parsePolicy(JSON.stringify({ version: 1, caps: { mcp: ['github/*', 'jira/search'] }, allowedConnections: ['https://mcp.github.example/*', '/opt/mcp/jira --readonly *'] }), 'p');
    assertRulesAllowed(policy, parsePermissionFlags(['--allow-mcp=github/*,github/x,jira/search'], '/'));
    expect(() => assertRulesAllowed(policy, parsePermissionFlags(['--allow-mcp=jira/*'], '/'))).toThrow(/beyond the allowed mcp cap/);
    // Any name, the right server: allowed. The right name, another server: refused.
    assertConnectionAllowed(policy, 'anything', { transport: 'http', url: 'https://mcp.github.example/v1/mcp' });
    assertConnectionAllowed(policy, 'tickets', { transport: 'stdio', command: '/opt/mcp/jira', args: ['--readonly', '--site', 'x'] });
    expect(wardErrorOf(() => assertConnectionAllowed(policy, 'github', { transport: 'http', url: 'https://mcp.evil.example/mcp' })).message).toBe(
      'connection "github" ("https://mcp.evil.example/mcp") is not allowed: it matches no allowedConnections entry: refused by the admin policy (p)',
    );
    expect(() => assertConnectionAllowed(policy, 'jira', { transport: 'stdio', command: '/opt/mcp/jira', args: [] })).toThrow(/matches no allowedConnections entry/);
    expect(() => assertConnectionAllowed(policy, 'github', { transport: 'http', url: 'https://mcp.github.example.evil.com/mcp' })).toThrow(/not allowed/);
  });

  it('test_the_gate_denies_requests_outside_caps_instead_of_prompting', () => {
    const policy = parsePolicy(JSON.stringify({ version: 1, reason: REASON, caps: { net: ['*.example.com'] }, forbid: ['env'] }), 'p');
    const gate = new PolicyGate(policy);
    expect(check(netRequestForUrl('https://evil.com/'), [], gate)).toEqual({ decision: 'deny', reason: `net evil.com:443 is beyond the cap set by ${REASON}` });
    expect(check(netRequestForUrl('https://a.example.com/'), [], gate).decision).toBe('prompt');
    expect(check(makeRequest('env', 'HOME', '/'), parsePermissionFlags(['--allow-env=HOME'], '/'), gate).decision).toBe('deny');
  });

  it('test_providers_and_cli_versions', () => {
    const policy = parsePolicy(JSON.stringify({ version: 1, providers: ['api.anthropic.com', '127.0.0.1'], cliVersions: ['2.1.328'] }), 'p');
    assertProviderAllowed(policy, 'https://api.anthropic.com');
    assertProviderAllowed(policy, 'http://127.0.0.1:41234');
    expect(() => assertProviderAllowed(policy, 'https://proxy.evil.com/v1')).toThrow(/model provider proxy.evil.com is not allowed/);
    assertCliVersionAllowed(policy, '2.1.328');
    expect(() => assertCliVersionAllowed(policy, '2.1.329')).toThrow(/Claude CLI version "2.1.329" is not allowed/);
    assertProviderAllowed(null, 'https://anything');
  });

  it('test_models_exact_names_and_prefixes', () => {
    const policy = parsePolicy(JSON.stringify({ models: ['claude-sonnet-*', 'claude-opus-4'] }), 'p');
    assertModelAllowed(policy, 'claude-sonnet-4-5');
    assertModelAllowed(policy, 'claude-opus-4');
    expect(() => assertModelAllowed(policy, 'claude-opus-4-1')).toThrow('model "claude-opus-4-1" is not allowed (allowed: claude-sonnet-*, claude-opus-4): refused by the admin policy (p)');
    assertModelAllowed(null, 'anything');
  });

  it('test_a_ward_policy_file_repeating_the_admins_entries_changes_nothing_wildcard_and_exact', () => {
    // Before: `*.example.com` from both sources intersected to [], and every run was refused.
    const lists = { providers: ['*.example.com', 'api.anthropic.com', 'proxy.example.net:8443'], caps: { net: ['*.example.com', 'api.example.net', '*.example.org:443'] } };
    const admin = writePolicy({ reason: REASON, ...lists });
    const merged = loadPolicy({ WARD_POLICY: writePolicy(lists) }, 'linux', at(admin))!;
    expect(merged.providers).toEqual(lists.providers);
    expect(merged.caps.net).toEqual(lists.caps.net);
    assertProviderAllowed(merged, 'https://api.example.com');
    assertProviderAllowed(merged, 'https://api.anthropic.com');
    assertRuleAllowed(merged, { effect: 'allow', kind: 'net', value: 'docs.example.com', source: 'flag' });
    // A narrower wildcard still narrows.
    const narrower = loadPolicy({ WARD_POLICY: writePolicy({ providers: ['*.eu.example.com'] }) }, 'linux', at(admin))!;
    expect(narrower.providers).toEqual(['*.eu.example.com']);
    expect(merged.warnings).toEqual([]);
    // Lists with nothing in common refuse everything: legitimate, but said, not silent.
    const mine = writePolicy({ providers: ['api.other.example'], caps: { net: ['api.other.example'] } });
    const disjoint = loadPolicy({ WARD_POLICY: mine }, 'linux', at(admin))!;
    expect(disjoint.providers).toEqual([]);
    expect(disjoint.warnings).toEqual([
      `providers: the sources (${admin}: providers, ${mine}: providers) have no entry in common, so nothing is allowed`,
      `caps.net: the sources (${admin}: caps, ${mine}: caps) have no entry in common, so nothing is allowed`,
    ]);
  });
});
