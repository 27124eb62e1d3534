import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { check, makeRequest, netRequestForUrl } from '../../main/permissions/engine.js';
import { parsePermissionFlags } from '../../main/permissions/grants.js';
import {
  PolicyGate,
  assertCliVersionAllowed,
  assertConnectionAllowed,
  assertExportAllowed,
  assertProviderAllowed,
  assertRulesAllowed,
  loadPolicy,
  parsePolicy,
  systemPolicyPath,
  mergePolicies,
  assertRuleAllowed,
} from '../../main/policy/policy.js';
import { tempDir } from '../support/temp.js';
import { wardErrorOf } from '../support/errors.js';

function writePolicy(value: unknown, mode = 0o644): string {
  const file = path.join(tempDir('ward-policy-'), 'policy.json');
  fs.writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
  fs.chmodSync(file, mode);
  return file;
}

const REASON = 'Example Corp IT (it@example.com)';

describe('admin policy', () => {
  it('test_system_locations_per_os', () => {
    expect(systemPolicyPath({}, 'linux')).toBe('/etc/ward/policy.json');
    expect(systemPolicyPath({}, 'darwin')).toBe('/Library/Application Support/Ward/policy.json');
    expect(systemPolicyPath({ ProgramData: 'D:\\PD' }, 'win32')).toBe('D:\\PD\\Ward\\policy.json');
    // The environment does not move the admin's file.
    expect(systemPolicyPath({ WARD_POLICY: '/x/p.json' }, 'linux')).toBe('/etc/ward/policy.json');
  });

  it('test_ward_policy_cannot_lift_the_admin_policy_it_only_adds_restrictions', () => {
    const admin = writePolicy({ version: 1, reason: REASON, forbid: ['run'], caps: { net: ['*.example.com'] } });
    // A user-owned file that allows everything: merged, the admin's limits still hold.
    const mine = writePolicy({ version: 1, reason: 'me' });
    const merged = loadPolicy({ WARD_POLICY: mine }, 'linux', admin)!;
    expect([...merged.forbid]).toEqual(['run']);
    expect(wardErrorOf(() => assertRuleAllowed(merged, { effect: 'allow', kind: 'run', value: 'ls', source: 'flag' })).code).toBe('policy_refused');
    expect(wardErrorOf(() => assertRuleAllowed(merged, { effect: 'allow', kind: 'net', value: 'evil.com', source: 'flag' })).code).toBe('policy_refused');
    // A stricter one narrows further.
    const stricter = writePolicy({ version: 1, reason: 'me', forbid: ['write'], caps: { net: ['api.example.com'] } });
    const narrowed = loadPolicy({ WARD_POLICY: stricter }, 'linux', admin)!;
    expect([...narrowed.forbid].sort()).toEqual(['run', 'write']);
    expect(narrowed.caps.net).toEqual(['api.example.com']);
  });

  it('test_two_policies_fixing_different_namespaces_fail_closed', () => {
    const a = parsePolicy(JSON.stringify({ version: 1, namespace: 'work' }), 'a');
    const b = parsePolicy(JSON.stringify({ version: 1, namespace: 'home' }), 'b');
    expect(wardErrorOf(() => mergePolicies(a, b))).toMatchObject({ code: 'policy_invalid', message: expect.stringContaining('fix different namespaces (work, home)') });
    expect(mergePolicies(a, parsePolicy(JSON.stringify({ version: 1, cliVersions: ['2.1.328'], connections: ['github', 'jira'] }), 'c'))).toMatchObject({ namespace: 'work', cliVersions: ['2.1.328'], connections: ['github', 'jira'] });
  });

  it('test_signed_exports_stay_required_when_either_policy_requires_them_and_refuse_transcripts', () => {
    const strict = parsePolicy(JSON.stringify({ version: 1, reason: 'Example IT', signedExports: true }), 'a');
    const lax = parsePolicy(JSON.stringify({ version: 1 }), 'b');
    expect(mergePolicies(lax, strict)).toMatchObject({ signedExports: true });
    expect(lax.signedExports).toBe(false);
    expect(() => assertExportAllowed(strict, 'bundle')).not.toThrow();
    expect(wardErrorOf(() => assertExportAllowed(strict, 'markdown'))).toMatchObject({ code: 'policy_refused', message: 'a markdown export carries no signature, and every export must be signed; export a bundle: refused by Example IT' });
    expect(() => assertExportAllowed(null, 'html')).not.toThrow();
  });

  it('test_no_policy_file_at_the_system_location_means_no_policy', () => {
    expect(loadPolicy({}, 'linux')).toBeNull();
  });

  it('test_ward_policy_naming_a_missing_file_fails_closed', () => {
    const file = path.join(tempDir(), 'absent.json');
    expect(wardErrorOf(() => loadPolicy({ WARD_POLICY: file }, 'linux'))).toMatchObject({ code: 'policy_invalid', message: expect.stringContaining(`the admin policy ${file} cannot be read`) });
  });

  it('test_malformed_json_fails_closed_naming_the_file', () => {
    const file = writePolicy('{"version": 1,');
    expect(wardErrorOf(() => loadPolicy({ WARD_POLICY: file }, 'linux'))).toMatchObject({ code: 'policy_invalid', message: expect.stringContaining('is not valid JSON') });
  });

  it('test_unknown_fields_and_wrong_types_fail_closed_naming_the_field', () => {
    expect(wardErrorOf(() => parsePolicy(JSON.stringify({ version: 1, allowAll: true }), 'p')).message).toContain('is malformed at (top level)');
    expect(wardErrorOf(() => parsePolicy(JSON.stringify({ version: 1, forbid: ['ffi'] }), 'p')).message).toContain('is malformed at forbid.0');
    expect(wardErrorOf(() => parsePolicy(JSON.stringify({ version: 2 }), 'p')).message).toContain('is malformed at version');
    expect(wardErrorOf(() => parsePolicy(JSON.stringify({ version: 1, caps: { read: ['relative/path'] } }), 'p')).message).toContain('caps.read entry "relative/path" must be an absolute path');
    expect(wardErrorOf(() => parsePolicy(JSON.stringify({ version: 1, caps: { net: ['https://x.com'] } }), 'p')).message).toContain('bad caps.net entry');
  });

  it('test_a_policy_writable_by_others_is_refused', () => {
    const file = writePolicy({ version: 1 }, 0o666);
    expect(wardErrorOf(() => loadPolicy({ WARD_POLICY: file }, 'linux')).message).toContain('is writable by group or others (mode 666)');
  });

  it('test_a_well_formed_policy_loads', () => {
    const file = writePolicy({ version: 1, reason: REASON, namespace: 'work', forbid: ['run'], caps: { net: ['*.example.com'] } });
    const policy = loadPolicy({ WARD_POLICY: file }, 'linux')!;
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

  it('test_mcp_caps_and_allowed_connections', () => {
    const policy = parsePolicy(JSON.stringify({ version: 1, caps: { mcp: ['github/*', 'jira/search'] }, connections: ['github', 'jira'] }), 'p');
    assertRulesAllowed(policy, parsePermissionFlags(['--allow-mcp=github/*,github/x,jira/search'], '/'));
    expect(() => assertRulesAllowed(policy, parsePermissionFlags(['--allow-mcp=jira/*'], '/'))).toThrow(/beyond the allowed mcp cap/);
    expect(() => assertConnectionAllowed(policy, 'slack')).toThrow(/connection "slack" is not allowed/);
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
});
