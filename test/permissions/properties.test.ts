import { reservedEnvReason } from '../../main/permissions/env-grants.js';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { WardError } from '../../main/base/errors.js';
import { check, makeRequest, netRequestForUrl } from '../../main/permissions/engine.js';
import { GRANT_KINDS, parsePermissionFlags } from '../../main/permissions/grants.js';
import { requestForToolCall } from '../../main/permissions/native-tools.js';
import { isWithin } from '../../main/permissions/paths.js';
import { tempDir } from '../support/temp.js';

const BASE = '/nonexistent-ward-base';

/** Labels the URL parser would refuse ("xn--" that is not valid punycode) are refused by the grant parser too (grants.test.ts). */
const notPunycode = (label: string): boolean => !label.startsWith('xn--');

/** Strings that look like flags people (and fuzzers) write: mostly plausible, sometimes garbage. */
const flagToken = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.tuple(fc.constantFrom('--allow-', '--deny-', '-'), fc.constantFrom(...GRANT_KINDS, 'all', 'ffi', '', 'READ'), fc.constantFrom('=', '', '=='), fc.string({ unit: 'binary', maxLength: 60 })).map((parts) => parts.join('')),
  fc.tuple(fc.constantFrom('--allow-net=', '--deny-net='), fc.array(fc.stringMatching(/^[*a-zA-Z0-9.:[\]-]{0,20}$/), { maxLength: 4 })).map(([flag, hosts]) => flag + hosts.join(',')),
);

describe('grant parser properties', () => {
  it('test_parser_never_throws_anything_but_ward_error', () => {
    fc.assert(
      fc.property(fc.array(flagToken, { maxLength: 4 }), (tokens) => {
        try {
          parsePermissionFlags(tokens, BASE);
        } catch (error) {
          if (!(error instanceof WardError) || error.code !== 'invalid_grant') throw error;
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('test_parsed_rules_round_trip_through_their_canonical_flags', () => {
    // Valid grants of every kind (every run reaches the assertion; garbage is the test above).
    const segment = fc.stringMatching(/^[a-zA-Z0-9_-][a-zA-Z0-9._-]{0,11}$/);
    const label = fc.stringMatching(/^[a-z]([a-z0-9-]{0,8}[a-z0-9])?$/).filter(notPunycode);
    const entries: Record<(typeof GRANT_KINDS)[number], fc.Arbitrary<string>> = {
      read: fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => `/${parts.join('/')}`),
      write: fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => `/${parts.join('/')}`),
      net: fc.tuple(fc.boolean(), fc.array(label, { minLength: 2, maxLength: 3 }), fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined })).map(([wild, labels, port]) => `${wild ? '*.' : ''}${labels.join('.')}${port === undefined ? '' : `:${port}`}`),
      run: fc.stringMatching(/^[a-z][a-z0-9_-]{0,15}$/),
      // Names Ward sets or keeps out (LD_*, ANTHROPIC_*…) are refused when written: not valid grants.
      env: fc.stringMatching(/^[A-Z_][A-Z0-9_]{0,15}$/).filter((name) => reservedEnvReason(name) === null),
      mcp: fc.tuple(fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,11}$/), fc.oneof(fc.constant('*'), fc.stringMatching(/^[a-zA-Z0-9][a-zA-Z0-9_-]{0,19}$/))).map(([connection, tool]) => `${connection}/${tool}`),
    };
    const grant = fc.tuple(fc.constantFrom('allow', 'deny'), fc.constantFrom(...GRANT_KINDS)).chain(([effect, kind]) => fc.array(entries[kind], { minLength: 1, maxLength: 3 }).map((list) => `--${effect}-${kind}=${list.join(',')}`));
    fc.assert(
      fc.property(fc.array(grant, { minLength: 1, maxLength: 4 }), (tokens) => {
        const rules = parsePermissionFlags(tokens, BASE);
        expect(rules.length).toBeGreaterThan(0);
        const again = parsePermissionFlags(
          rules.map((rule) => `--${rule.effect}-${rule.kind}=${rule.value}`),
          BASE,
        );
        expect(again).toEqual(rules);
      }),
      { numRuns: 2000 },
    );
  });

  it('test_canonical_net_values_round_trip', () => {
    const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?$/);
    const urlCarries = (hostname: string): boolean => {
      try {
        return new URL(`http://${hostname}/`).hostname === hostname;
      } catch {
        return false;
      }
    };
    const host = fc.tuple(fc.boolean(), fc.array(label, { minLength: 2, maxLength: 4 }), fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined })).map(
      ([wild, labels, port]) => `${wild ? '*.' : ''}${labels.join('.')}${port === undefined ? '' : `:${port}`}`,
    );
    fc.assert(
      fc.property(host, (entry) => {
        if (/^(\*\.)?[\d.]+(:\d+)?$/.test(entry)) return; // all-numeric names are IP addresses, tested apart
        const hostname = entry.replace(/^\*\./, '').replace(/:\d+$/, '');
        if (!urlCarries(hostname)) {
          // A last label URLs read as a number ("1", "0x", "0x1f") or a bad "xn--" label: refused, by name.
          expect(() => parsePermissionFlags([`--allow-net=${entry}`], BASE)).toThrow(`"${hostname}" is not a host name a URL can reach`);
          return;
        }
        const [rule] = parsePermissionFlags([`--allow-net=${entry}`], BASE);
        expect(rule!.value).toBe(entry);
      }),
    );
  });
});

describe('native tool mapping properties', () => {
  it('test_any_tool_call_maps_to_a_request_or_a_refusal_and_never_throws', () => {
    const tool = fc.constantFrom('Read', 'Glob', 'Grep', 'LS', 'Edit', 'Write', 'MultiEdit', 'NotebookEdit', 'Bash', 'WebFetch', 'WebSearch', 'mcp__ward__x', 'Task');
    const value = fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), fc.constantFrom('../../etc', '/etc/passwd', 'http://[::1', 'https://a.b:99999/', 'git log | sh', '**/../x'), fc.integer(), fc.constant(null));
    const input = fc.dictionary(fc.constantFrom('file_path', 'path', 'pattern', 'glob', 'command', 'url', 'notebook_path', 'query'), value);
    const routes = [{ exposedName: 'x', upstream: 'gh', upstreamName: 'x', description: '', inputSchema: { type: 'object' as const }, schemaHash: 'h' }];
    fc.assert(
      fc.property(tool, input, (name, args) => {
        const mapped = requestForToolCall(name, args, { baseDir: BASE, routes });
        if (mapped.ok) expect(typeof mapped.request.value).toBe('string');
        else expect(mapped.reason.length).toBeGreaterThan(0);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('host matcher properties', () => {
  const label = fc.stringMatching(/^[a-z]([a-z0-9-]{0,6}[a-z0-9])?$/).filter(notPunycode);

  it('test_a_wildcard_covers_exactly_the_hosts_that_end_with_dot_domain', () => {
    fc.assert(
      fc.property(fc.array(label, { minLength: 2, maxLength: 3 }), fc.array(label, { minLength: 1, maxLength: 4 }), (domain, host) => {
        const rules = parsePermissionFlags([`--allow-net=*.${domain.join('.')}`], BASE);
        const candidate = host.join('.');
        const expected = candidate.endsWith(`.${domain.join('.')}`);
        expect(check(netRequestForUrl(`https://${candidate}/`), rules).decision).toBe(expected ? 'allow' : 'prompt');
      }),
    );
  });

  it('test_a_deny_on_a_host_beats_any_wildcard_allow', () => {
    fc.assert(
      fc.property(fc.array(label, { minLength: 2, maxLength: 3 }), label, (domain, sub) => {
        const host = `${sub}.${domain.join('.')}`;
        const rules = parsePermissionFlags([`--allow-net=*.${domain.join('.')}`, `--deny-net=${host}`], BASE);
        expect(check(netRequestForUrl(`https://${host}:8443/x`), rules).decision).toBe('deny');
      }),
    );
  });
});

describe('path matcher properties', () => {
  const segment = fc.constantFrom('src', 'secrets', 'docs', '..', '.', 'new', 'a.ts', '');

  it('test_random_dotdot_segments_never_escape_and_the_denied_sub_dir_stays_denied', () => {
    const root = fs.realpathSync(tempDir());
    const project = path.join(root, 'project');
    fs.mkdirSync(path.join(project, 'src', 'secrets'), { recursive: true });
    fs.mkdirSync(path.join(project, 'docs'));
    const rules = parsePermissionFlags(['--allow-read=./src', '--deny-read=./src/secrets'], project);
    const allowed = path.join(project, 'src');
    const denied = path.join(project, 'src', 'secrets');
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 8 }), (segments) => {
        const raw = ['src', ...segments].join('/');
        const request = makeRequest('read', raw, project);
        // No symlinks here, so the OS's answer is the lexical one.
        const expected = path.resolve(project, raw);
        expect(request.value).toBe(expected);
        const { decision } = check(request, rules);
        if (isWithin(denied, expected)) expect(decision).toBe('deny');
        else if (isWithin(allowed, expected)) expect(decision).toBe('allow');
        else expect(decision).toBe('prompt');
      }),
      { numRuns: 1000 },
    );
  });

  it('test_symlinks_pointing_outside_are_never_allowed', () => {
    const root = fs.realpathSync(tempDir());
    const project = path.join(root, 'project');
    const outside = path.join(root, 'outside');
    fs.mkdirSync(path.join(project, 'src', 'in'), { recursive: true });
    fs.mkdirSync(path.join(outside, 'in'), { recursive: true });
    fs.symlinkSync(outside, path.join(project, 'src', 'out'));
    fs.symlinkSync(path.join(outside, 'in'), path.join(project, 'src', 'in', 'deep'));
    fs.symlinkSync('../../outside/in', path.join(project, 'src', 'rel'));
    fs.symlinkSync(path.join(outside, 'missing.txt'), path.join(project, 'src', 'dangling'));
    for (const dir of [root, project, path.join(project, 'src'), path.join(project, 'src', 'in'), outside, path.join(outside, 'in')]) fs.writeFileSync(path.join(dir, 'f'), 'x');
    const rules = parsePermissionFlags(['--allow-read=./src'], project);
    const allowedRoot = path.join(project, 'src');
    const piece = fc.constantFrom('out', 'in', 'deep', 'rel', 'dangling', '..', '.');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 6 }), (segments) => {
        const raw = ['src', ...segments, 'f'].join('/');
        const request = makeRequest('read', raw, project);
        const { decision } = check(request, rules);
        let real: string | undefined;
        try {
          // realpath(3) follows each link before its `..`, as open(2) does (fs.realpathSync would normalize first).
          real = fs.realpathSync.native(`${project}/${raw}`);
        } catch {
          real = undefined; // the OS cannot open it either
        }
        if (real !== undefined) expect(request.value).toBe(real);
        if (decision === 'allow') expect(isWithin(allowedRoot, request.value)).toBe(true);
        if (real !== undefined && !isWithin(allowedRoot, real)) expect(decision).not.toBe('allow');
      }),
      { numRuns: 1000 },
    );
  });
});
