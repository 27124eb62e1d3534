import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsePermissionFlags, splitPermissionArgs, type Rule } from '../../main/permissions/grants.js';
import { isValidAllowedDomainEntry } from '@anthropic-ai/sandbox-runtime/dist/sandbox/domain-pattern.js';
import { tempDir } from '../support/temp.js';
import { wardErrorOf } from '../support/errors.js';
import { isWardError } from '../../main/base/errors.js';

function parse(tokens: string[], base = '/work/base'): Rule[] {
  return parsePermissionFlags(tokens, base);
}

describe('grant flag parser', () => {
  it('test_allow_read_resolves_relative_paths_against_the_base_dir', () => {
    const base = fs.realpathSync(tempDir());
    fs.mkdirSync(path.join(base, 'src'));
    const rules = parse(['--allow-read=./src,docs'], base);
    expect(rules).toEqual([
      { effect: 'allow', kind: 'read', value: path.join(base, 'src'), source: 'flag' },
      { effect: 'allow', kind: 'read', value: path.join(base, 'docs'), source: 'flag' },
    ]);
  });

  it('test_deny_write_is_a_deny_rule', () => {
    const base = fs.realpathSync(tempDir());
    expect(parse(['--deny-write=./src/secrets'], base)).toEqual([{ effect: 'deny', kind: 'write', value: path.join(base, 'src', 'secrets'), source: 'flag' }]);
  });

  it('test_path_entries_are_normalized', () => {
    const base = fs.realpathSync(tempDir());
    expect(parse(['--allow-read=./a/../b/./c//d'], base)[0]!.value).toBe(path.join(base, 'b', 'c', 'd'));
  });

  it('test_net_entries_accept_hosts_ports_wildcards_and_ipv6', () => {
    expect(parse(['--allow-net=API.GitHub.com,localhost:8080,*.example.com,[::1]:9000,127.0.0.1']).map((rule) => rule.value)).toEqual([
      'api.github.com',
      'localhost:8080',
      '*.example.com',
      '[::1]:9000',
      '127.0.0.1',
    ]);
  });

  it('test_run_env_and_mcp_entries', () => {
    expect(parse(['--allow-run=git,npm,/usr/bin/env', '--allow-env=HOME', '--allow-mcp=github/list_issues,jira/*']).map((rule) => `${rule.kind}:${rule.value}`)).toEqual([
      'run:git',
      'run:npm',
      'run:/usr/bin/env',
      'env:HOME',
      'mcp:github/list_issues',
      'mcp:jira/*',
    ]);
  });

  it('test_allow_all_is_refused', () => {
    expect(wardErrorOf(() => parse(['--allow-all']))).toMatchObject({ code: 'invalid_grant', message: expect.stringContaining('never grants everything') });
    expect(wardErrorOf(() => parse(['-A'])).message).toContain('-A');
  });

  it('test_a_kind_without_a_list_is_refused', () => {
    expect(wardErrorOf(() => parse(['--allow-read'])).message).toBe('--allow-read needs a list (--allow-read=ENTRY,ENTRY); Ward has no allow-all for a kind');
    expect(wardErrorOf(() => parse(['--allow-net='])).message).toContain('--allow-net needs a list');
  });

  it('test_unknown_kind_is_refused_by_name', () => {
    expect(wardErrorOf(() => parse(['--allow-ffi=x'])).message).toBe('--allow-ffi: unknown permission kind "ffi"; kinds are read, write, net, run, env, mcp');
  });

  it('test_empty_entries_are_refused_with_their_position', () => {
    expect(wardErrorOf(() => parse(['--allow-read=a,,b'])).message).toBe('--allow-read: entry 2 of "a,,b" is empty');
    expect(wardErrorOf(() => parse(['--allow-run=git,'])).message).toBe('--allow-run: entry 2 of "git," is empty');
  });

  it('test_nul_bytes_are_refused', () => {
    expect(wardErrorOf(() => parse(['--allow-read=a\0b'])).message).toContain('contains a NUL or control character');
  });

  it('test_malformed_hosts_and_ports_name_the_entry', () => {
    expect(wardErrorOf(() => parse(['--allow-net=https://api.github.com'])).message).toBe('--allow-net: net entry "https://api.github.com": give a host, not a URL (no scheme)');
    expect(wardErrorOf(() => parse(['--allow-net=example.com:99999'])).message).toContain('port 99999 is outside 1-65535');
    expect(wardErrorOf(() => parse(['--allow-net=example.com:0'])).message).toContain('port 0 is outside 1-65535');
    expect(wardErrorOf(() => parse(['--allow-net=example.com:http'])).message).toContain('port "http" is not a number');
    expect(wardErrorOf(() => parse(['--allow-net=exa_mple.com'])).message).toContain('invalid host label "exa_mple"');
    expect(wardErrorOf(() => parse(['--allow-net=*'])).message).toContain('a host is required');
    expect(wardErrorOf(() => parse(['--allow-net=a.*.com'])).message).toContain('invalid host label "*"');
    expect(wardErrorOf(() => parse(['--allow-net=*.com'])).message).toContain('at least two labels');
    expect(wardErrorOf(() => parse(['--allow-net=300.1.1.1'])).message).toContain('is not a valid IPv4 address');
    expect(wardErrorOf(() => parse(['--allow-net=::1'])).message).toContain('write IPv6 addresses in brackets');
    // Names the URL parser refuses or reads as something else: a grant that could never match.
    expect(wardErrorOf(() => parse(['--allow-net=a.xn--a.example'])).message).toContain('"a.xn--a.example" is not a host name a URL can reach');
    expect(wardErrorOf(() => parse(['--allow-net=0x7f.1'])).message).toContain('is not a host name a URL can reach');
    expect(parse(['--allow-net=xn--bcher-kva.example'])[0]?.value).toBe('xn--bcher-kva.example');
  });

  it('test_run_entries_refuse_relative_paths', () => {
    expect(wardErrorOf(() => parse(['--allow-run=./build.sh'])).message).toContain('not a relative path');
    expect(wardErrorOf(() => parse(['--allow-run=/usr/../bin/sh'])).message).toContain('may not contain "." or ".." segments');
    expect(wardErrorOf(() => parse(['--allow-run=rm -rf'])).message).toContain('letters, digits and "._+-" only');
  });

  it('test_env_and_mcp_entries_are_validated', () => {
    expect(wardErrorOf(() => parse(['--allow-env=1PATH'])).message).toContain('does not start with a digit');
    expect(wardErrorOf(() => parse(['--allow-mcp=github'])).message).toContain('write connection/tool or connection/*');
    expect(wardErrorOf(() => parse(['--allow-mcp=github/*x'])).message).toContain('invalid tool name');
  });

  it('test_every_net_allow_ward_takes_is_one_the_sandbox_runtime_takes_and_a_single_label_host_is_refused_saying_how_to_write_it', () => {
    const samples = ['vm:8080', 'vm', 'intranet:443', 'localhost', 'localhost:3000', '127.0.0.1:8080', '[::1]:8080', 'api.github.com', 'API.GitHub.com:443', '*.example.com', '*.example.com:8443', 'xn--bcher-kva.example', '*.co.uk', 'a-b.c'];
    for (const sample of samples) {
      let value: string | null = null;
      try {
        value = parse([`--allow-net=${sample}`])[0]!.value;
      } catch (error) {
        if (!isWardError(error, 'invalid_grant')) throw error;
      }
      // The runtime's own check, fed the same samples: Ward keeps exactly what it would take.
      expect([sample, isValidAllowedDomainEntry(value ?? sample.toLowerCase())]).toEqual([sample, value !== null]);
    }
    expect(() => parse(['--allow-net=vm:8080'])).toThrow(
      '--allow-net: net entry "vm:8080": the sandbox\'s proxy takes a host name only with a dot in it (localhost aside): write "vm" as its full name (like vm.internal) or as its IP address',
    );
    // A deny never goes to the proxy's list: it may name any host Ward can parse.
    expect(parse(['--deny-net=vm'])).toEqual([{ effect: 'deny', kind: 'net', value: 'vm', source: 'flag' }]);
  });

  it('test_non_permission_tokens_are_refused', () => {
    expect(wardErrorOf(() => parse(['--model=x'])).message).toContain('is not a permission flag');
  });

  it('test_split_permission_args_keeps_everything_after_the_separator', () => {
    expect(splitPermissionArgs(['--allow-read=.', '--model', 'x', '--', '--allow-net=evil.com'])).toEqual({
      permissionArgs: ['--allow-read=.'],
      otherArgs: ['--model', 'x', '--', '--allow-net=evil.com'],
    });
  });
});
