import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { check, makeRequest, netRequestForUrl, type PermissionRequest } from '../../main/permissions/engine.js';
import { parsePermissionFlags } from '../../main/permissions/grants.js';
import { tempDir } from '../support/temp.js';

function project(): { base: string; outside: string } {
  const root = fs.realpathSync(tempDir());
  const base = path.join(root, 'project');
  const outside = path.join(root, 'outside');
  fs.mkdirSync(path.join(base, 'src', 'secrets'), { recursive: true });
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(base, 'src', 'a.ts'), 'x');
  fs.writeFileSync(path.join(outside, 'secret.txt'), 'canary');
  return { base, outside };
}

describe('decision engine', () => {
  it('test_read_inside_an_allowed_dir_is_allowed_by_that_rule', () => {
    const { base } = project();
    const rules = parsePermissionFlags(['--allow-read=./src'], base);
    const decision = check(makeRequest('read', 'src/a.ts', base), rules);
    expect(decision.decision).toBe('allow');
    expect(decision.rule?.value).toBe(path.join(base, 'src'));
  });

  it('test_read_outside_every_grant_prompts', () => {
    const { base, outside } = project();
    const rules = parsePermissionFlags(['--allow-read=./src'], base);
    expect(check(makeRequest('read', path.join(outside, 'secret.txt'), base), rules).decision).toBe('prompt');
  });

  it('test_read_through_a_symlink_pointing_outside_is_not_allowed', () => {
    const { base, outside } = project();
    fs.symlinkSync(outside, path.join(base, 'src', 'escape'));
    const rules = parsePermissionFlags(['--allow-read=./src'], base);
    const request = makeRequest('read', 'src/escape/secret.txt', base);
    expect(request.value).toBe(path.join(outside, 'secret.txt'));
    expect(check(request, rules).decision).toBe('prompt');
  });

  it('test_dotdot_escape_is_not_allowed', () => {
    const { base } = project();
    const rules = parsePermissionFlags(['--allow-read=./src'], base);
    expect(check(makeRequest('read', 'src/../../outside/secret.txt', base), rules).decision).toBe('prompt');
  });

  it('test_deny_sub_dir_beats_allowed_parent', () => {
    const { base } = project();
    const rules = parsePermissionFlags(['--allow-write=./src', '--deny-write=./src/secrets'], base);
    const denied = check(makeRequest('write', 'src/secrets/key.pem', base), rules);
    expect(denied.decision).toBe('deny');
    expect(denied.reason).toBe(`denied by deny write ${path.join(base, 'src', 'secrets')} (flag)`);
    expect(check(makeRequest('write', 'src/a.ts', base), rules).decision).toBe('allow');
  });

  it('test_deny_wins_even_over_a_more_specific_allow', () => {
    const { base } = project();
    const rules = parsePermissionFlags(['--deny-read=./src', '--allow-read=./src/a.ts'], base);
    expect(check(makeRequest('read', 'src/a.ts', base), rules).decision).toBe('deny');
  });

  it('test_most_specific_allow_rule_is_reported', () => {
    const { base } = project();
    const rules = parsePermissionFlags(['--allow-read=.', '--allow-read=./src'], base);
    expect(check(makeRequest('read', 'src/a.ts', base), rules).rule?.value).toBe(path.join(base, 'src'));
  });

  it('test_read_grant_does_not_cover_write', () => {
    const { base } = project();
    const rules = parsePermissionFlags(['--allow-read=./src'], base);
    expect(check(makeRequest('write', 'src/a.ts', base), rules).decision).toBe('prompt');
  });

  it('test_sibling_with_a_common_prefix_is_not_covered', () => {
    const { base } = project();
    fs.mkdirSync(path.join(base, 'srcx'));
    const rules = parsePermissionFlags(['--allow-read=./src'], base);
    expect(check(makeRequest('read', 'srcx/f', base), rules).decision).toBe('prompt');
  });

  it('test_net_exact_host_any_port_and_pinned_port', () => {
    const rules = parsePermissionFlags(['--allow-net=api.github.com,localhost:8080'], '/');
    expect(check(netRequestForUrl('https://api.github.com/repos'), rules).decision).toBe('allow');
    expect(check(netRequestForUrl('http://api.github.com:8443/'), rules).decision).toBe('allow');
    expect(check(netRequestForUrl('http://localhost:8080/x'), rules).decision).toBe('allow');
    expect(check(netRequestForUrl('http://localhost:9090/x'), rules).decision).toBe('prompt');
    expect(check(netRequestForUrl('https://github.com/'), rules).decision).toBe('prompt');
  });

  it('test_net_wildcard_covers_subdomains_not_the_apex_or_lookalikes', () => {
    const rules = parsePermissionFlags(['--allow-net=*.example.com'], '/');
    expect(check(netRequestForUrl('https://a.example.com/'), rules).decision).toBe('allow');
    expect(check(netRequestForUrl('https://a.b.example.com/'), rules).decision).toBe('allow');
    expect(check(netRequestForUrl('https://example.com/'), rules).decision).toBe('prompt');
    expect(check(netRequestForUrl('https://evilexample.com/'), rules).decision).toBe('prompt');
    expect(check(netRequestForUrl('https://example.com.evil.net/'), rules).decision).toBe('prompt');
  });

  it('test_net_deny_beats_wildcard_allow', () => {
    const rules = parsePermissionFlags(['--allow-net=*.example.com', '--deny-net=admin.example.com'], '/');
    expect(check(netRequestForUrl('https://admin.example.com/'), rules).decision).toBe('deny');
  });

  it('test_non_http_urls_are_refused', () => {
    expect(() => netRequestForUrl('file:///etc/passwd')).toThrow('only http and https URLs can be granted');
  });

  it('test_run_matches_exact_command_names_only', () => {
    const rules = parsePermissionFlags(['--allow-run=git'], '/');
    expect(check({ kind: 'run', value: 'git' }, rules).decision).toBe('allow');
    expect(check({ kind: 'run', value: 'gitk' }, rules).decision).toBe('prompt');
    expect(check({ kind: 'run', value: '/tmp/git' }, rules).decision).toBe('prompt');
  });

  it('test_compound_command_is_never_allowed_by_a_grant_but_still_denied_by_a_deny', () => {
    const rules = parsePermissionFlags(['--allow-run=git', '--deny-run=rm'], '/');
    expect(check({ kind: 'run', value: 'git', compound: true }, rules).decision).toBe('prompt');
    expect(check({ kind: 'run', value: 'rm', compound: true }, rules).decision).toBe('deny');
  });

  it('test_env_names_match_exactly', () => {
    const rules = parsePermissionFlags(['--allow-env=HOME'], '/');
    expect(check({ kind: 'env', value: 'HOME' }, rules).decision).toBe('allow');
    expect(check({ kind: 'env', value: 'HOMEX' }, rules).decision).toBe('prompt');
  });

  it('test_mcp_tool_and_connection_wildcard', () => {
    const rules = parsePermissionFlags(['--allow-mcp=github/list_issues,jira/*', '--deny-mcp=jira/delete_issue'], '/');
    const ask = (value: string): string => check({ kind: 'mcp', value } satisfies PermissionRequest, rules).decision;
    expect(ask('github/list_issues')).toBe('allow');
    expect(ask('github/create_issue')).toBe('prompt');
    expect(ask('jira/search')).toBe('allow');
    expect(ask('jira/delete_issue')).toBe('deny');
    expect(ask('jiraa/search')).toBe('prompt');
  });

  it('test_policy_gate_refusal_comes_first', () => {
    const rules = parsePermissionFlags(['--allow-env=HOME'], '/');
    const decision = check({ kind: 'env', value: 'HOME' }, rules, { refusal: () => 'env is forbidden by IT' });
    expect(decision).toEqual({ decision: 'deny', reason: 'env is forbidden by IT' });
  });
});
