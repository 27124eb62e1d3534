import { describe, expect, it } from 'vitest';
import { matchesConnection, matcherWithin, parseConnectionMatcher } from '../../main/policy/connection-match.js';
import { wardErrorOf } from '../support/errors.js';

const http = (url: string) => ({ transport: 'http' as const, url });
const stdio = (command: string, ...args: string[]) => ({ transport: 'stdio' as const, command, args });
const matches = (entry: string, identity: Parameters<typeof matchesConnection>[1]) => matchesConnection(parseConnectionMatcher(entry), identity);

describe('policy connection entries match what a server is', () => {
  it('test_url_entries_exact_prefix_and_subdomain', () => {
    expect(matches('https://mcp.example.com/mcp', http('https://mcp.example.com/mcp'))).toBe(true);
    expect(matches('https://mcp.example.com/mcp', http('https://mcp.example.com/mcp/x'))).toBe(false);
    expect(matches('https://mcp.example.com/*', http('https://mcp.example.com/any/path?q=1'))).toBe(true);
    expect(matches('https://mcp.example.com/*', http('https://mcp.example.com.evil.io/mcp'))).toBe(false);
    expect(matches('https://mcp.example.com/*', http('http://mcp.example.com/mcp'))).toBe(false);
    expect(matches('https://mcp.example.com/*', http('https://mcp.example.com:8443/mcp'))).toBe(false);
    expect(matches('https://*.example.com/*', http('https://a.b.example.com/mcp'))).toBe(true);
    expect(matches('https://*.example.com/*', http('https://example.com/mcp'))).toBe(false);
    // Dot segments are resolved before matching: no escaping the prefix.
    expect(matches('https://x.example.com/team/*', http('https://x.example.com/team/../other'))).toBe(false);
  });

  it('test_command_entries_exact_arguments_or_a_trailing_star_json_for_spaces', () => {
    expect(matches('/opt/mcp/server --readonly', stdio('/opt/mcp/server', '--readonly'))).toBe(true);
    expect(matches('/opt/mcp/server --readonly', stdio('/opt/mcp/server', '--readonly', '--write'))).toBe(false);
    expect(matches('/opt/mcp/server *', stdio('/opt/mcp/server', 'anything'))).toBe(true);
    expect(matches('/opt/mcp/server *', stdio('/opt/mcp/server-evil'))).toBe(false);
    expect(matches('["/Applications/My Tools/mcp", "--name", "a b"]', stdio('/Applications/My Tools/mcp', '--name', 'a b'))).toBe(true);
    expect(matches('/opt/mcp/server *', http('https://x.example.com/'))).toBe(false);
  });

  it('test_malformed_entries_are_refused', () => {
    expect(wardErrorOf(() => parseConnectionMatcher('https://mcp.*.com/'))).toMatchObject({ code: 'policy_invalid', message: 'connection entry "https://mcp.*.com/" may use "*" only as "*." at the start of the host' });
    expect(wardErrorOf(() => parseConnectionMatcher('https://x.com/a*b')).message).toContain('only as its last segment');
    expect(wardErrorOf(() => parseConnectionMatcher('relative/server')).message).toContain('must start with an absolute path or a program name');
    expect(wardErrorOf(() => parseConnectionMatcher('["not", 1]')).message).toContain('must be a JSON array of strings');
  });

  it('test_within_decides_which_entries_two_allow_lists_share', () => {
    const within = (inner: string, outer: string) => matcherWithin(parseConnectionMatcher(inner), parseConnectionMatcher(outer));
    expect(within('https://a.example.com/mcp', 'https://*.example.com/*')).toBe(true);
    expect(within('https://*.example.com/*', 'https://a.example.com/*')).toBe(false);
    expect(within('https://x.com/team/a/*', 'https://x.com/team/*')).toBe(true);
    expect(within('/opt/s --a *', '/opt/s *')).toBe(true);
    expect(within('/opt/s *', '/opt/s --a *')).toBe(false);
  });
});
