import { describe, expect, it } from 'vitest';
import { exposedToolName, parseConnectionSpec, parseServerUrl, unusableToolName } from '../../main/connections/config.js';

const fails = (input: unknown): string => {
  try {
    parseConnectionSpec(input);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected a failure');
};

describe('connection configuration', () => {
  it('test_accepts_an_https_url_and_a_loopback_http_url', () => {
    expect(parseConnectionSpec({ transport: 'http', name: 'remote', url: 'https://mcp.example.com/mcp' })).toEqual({
      transport: 'http',
      name: 'remote',
      url: 'https://mcp.example.com/mcp',
      allowInsecureHttp: false,
      clientId: null,
    });
    expect(parseConnectionSpec({ transport: 'http', name: 'local', url: 'http://127.0.0.1:8080/mcp' }).transport).toBe('http');
  });

  it('test_refuses_plain_http_to_another_host_unless_the_override_is_given', () => {
    expect(fails({ transport: 'http', name: 'x', url: 'http://mcp.example.com/mcp' })).toMatch(/^connection url: .*plain http to a non-loopback host.*--allow-insecure-http/);
    expect(parseConnectionSpec({ transport: 'http', name: 'x', url: 'http://mcp.example.com/mcp', allowInsecureHttp: true }).transport).toBe('http');
  });

  it('test_names_the_field_of_each_malformed_entry', () => {
    expect(fails({ transport: 'http', name: 'x', url: 'ftp://example.com' })).toMatch(/^connection url: .*must use https/);
    expect(fails({ transport: 'http', name: 'x', url: 'https://user:pw@example.com/' })).toMatch(/^connection url: .*user name or password/);
    expect(fails({ transport: 'http', name: 'x', url: 'not a url' })).toMatch(/^connection url: .*is not a URL/);
    expect(fails({ transport: 'http', name: 'Bad_Name', url: 'https://x' })).toMatch(/^connection name: invalid connection name "Bad_Name"/);
    expect(fails({ transport: 'stdio', name: 'x', command: 'npx some-server' })).toMatch(/^connection command: .*contains spaces/);
    expect(fails({ transport: 'stdio', name: 'x', command: 'bin/server' })).toMatch(/^connection command: .*absolute path/);
    expect(fails({ transport: 'stdio', name: 'x', command: 'server', args: ['ok', 3] })).toMatch(/^connection args\[1\]: must be a string/);
    expect(fails({ transport: 'stdio', name: 'x', command: 'server', secretEnv: ['LD_PRELOAD'] })).toMatch(/^connection secretEnv\[0\]: LD_PRELOAD may not be set/);
    expect(fails({ transport: 'stdio', name: 'x', command: 'server', secretEnv: ['A B'] })).toMatch(/^connection secretEnv\[0\]: "A B" is not an environment variable name/);
    expect(fails({ transport: 'stdio', name: 'x', command: 'server', url: 'https://x' })).toMatch(/^connection url: unknown field/);
    expect(fails({ transport: 'sse', name: 'x' })).toMatch(/^connection transport: "sse" is not a transport/);
    expect(fails(null)).toMatch(/^connection spec: must be an object/);
  });

  it('test_s5_a_sandbox_setting_is_canonical_deduplicated_and_bounded', () => {
    const sandboxed = (sandbox: unknown) => parseConnectionSpec({ transport: 'stdio', name: 'x', command: 'server', sandbox });
    expect(sandboxed({ net: ['Docs.Example.com', 'docs.example.com', '*.cdn.example.com:443', '[::1]:8080'], folder: '/srv/x/../data' })).toMatchObject({
      sandbox: { net: ['docs.example.com', '*.cdn.example.com:443', '[::1]:8080'], folder: '/srv/data' },
    });
    expect(sandboxed(undefined)).toMatchObject({ sandbox: null });
    expect(sandboxed({})).toMatchObject({ sandbox: { net: [], folder: null } });
    expect(fails({ transport: 'stdio', name: 'x', command: 'server', sandbox: { net: Array.from({ length: 65 }, (_, i) => `h${i}.example.com`) } })).toMatch(/^connection sandbox\.net: at most 64 entries/);
    expect(fails({ transport: 'stdio', name: 'x', command: 'server', sandbox: { net: ['exa mple.com'] } })).toMatch(/^connection sandbox\.net\[0\]: "exa mple.com": a host may not contain/);
    expect(fails({ transport: 'stdio', name: 'x', command: 'server', sandbox: { folder: 'data' } })).toMatch(/^connection sandbox\.folder: "data" must be an absolute path/);
    expect(fails({ transport: 'stdio', name: 'x', command: 'server', sandbox: { net: [], proxy: true } })).toMatch(/^connection sandbox\.proxy: unknown field/);
    expect(fails({ transport: 'http', name: 'x', url: 'https://x', sandbox: { net: [] } })).toMatch(/^connection sandbox: unknown field for a http connection/);
  });

  it('test_namespaces_tool_names_per_connection_so_the_split_is_unambiguous', () => {
    expect(exposedToolName('files', 'read')).toBe('files__read');
    // A server naming its tool after another connection's still lives under its own prefix.
    expect(exposedToolName('beta', 'alpha__read')).toBe('beta__alpha__read');
    expect(unusableToolName('files', 'read file')).toMatch(/cannot be offered/);
    expect(unusableToolName('files', 'x'.repeat(60))).toMatch(/cannot be offered/);
    expect(unusableToolName('files', 'read')).toBeUndefined();
  });
});

describe('a refused server URL in the desktop (issue 31)', () => {
  it('test_plain_http_and_a_url_with_a_password_are_refused_without_a_terminal_flag_or_command_in_the_desktops_words', () => {
    for (const [raw, cli] of [
      ['http://mcp.example.com/mcp', /--allow-insecure-http/],
      ['https://user:pw@mcp.example.com/mcp', /ward connections login/],
    ] as const) {
      let thrown: unknown;
      try {
        parseServerUrl(raw, false);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toMatchObject({ code: 'invalid_config', message: expect.stringMatching(cli) });
      const desktop = (thrown as { desktop?: string }).desktop;
      expect(desktop).toMatch(/^connection url: /);
      expect(desktop).not.toMatch(/--|\bward /);
    }
  });
});

