import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PinnedToolRoute } from '../../main/upstreams/types.js';
import { parsePermissionFlags } from '../../main/permissions/grants.js';
import { renderCliOptions, requestForToolCall, runRequestForCommand } from '../../main/permissions/native-tools.js';
import { tempDir } from '../support/temp.js';

const route = (exposedName: string, upstream: string, upstreamName: string): PinnedToolRoute => ({
  exposedName,
  upstream,
  upstreamName,
  description: '',
  inputSchema: { type: 'object' },
  schemaHash: 'x',
});

const ROUTES = [route('list_issues', 'github', 'list_issues'), route('jira_search', 'jira', 'search')];

describe('native tool mapping', () => {
  const base = fs.realpathSync(tempDir('ward-native-'));
  const context = { baseDir: base, routes: ROUTES };

  it('test_read_glob_grep_map_to_read_requests', () => {
    expect(requestForToolCall('Read', { file_path: 'src/a.ts' }, context)).toEqual({ ok: true, request: { kind: 'read', value: path.join(base, 'src', 'a.ts') } });
    // A search covers its folder and everything below it.
    expect(requestForToolCall('Glob', { pattern: 'src/**/*.ts' }, context)).toEqual({ ok: true, request: { kind: 'read', value: path.join(base, 'src'), subtree: true } });
    expect(requestForToolCall('Glob', { pattern: '*.md', path: '/etc' }, context)).toEqual({ ok: true, request: { kind: 'read', value: '/etc', subtree: true } });
    expect(requestForToolCall('Grep', { pattern: 'TODO' }, context)).toEqual({ ok: true, request: { kind: 'read', value: base, subtree: true } });
  });

  it('test_glob_climbing_after_a_wildcard_is_refused', () => {
    expect(requestForToolCall('Glob', { pattern: '**/../../etc/*' }, context)).toMatchObject({ ok: false, reason: expect.stringContaining('climbs with ".."') });
  });

  it('test_glob_with_a_literal_dotdot_prefix_resolves_outside', () => {
    const mapped = requestForToolCall('Glob', { pattern: '../*' }, context);
    expect(mapped).toEqual({ ok: true, request: { kind: 'read', value: path.dirname(base), subtree: true } });
  });

  it('test_grep_glob_filter_may_not_leave_its_path', () => {
    expect(requestForToolCall('Grep', { pattern: 'x', glob: '../**' }, context).ok).toBe(false);
  });

  it('test_edit_write_multiedit_notebookedit_map_to_write', () => {
    for (const tool of ['Edit', 'Write', 'MultiEdit']) {
      expect(requestForToolCall(tool, { file_path: '/tmp/x' }, context)).toMatchObject({ ok: true, request: { kind: 'write' } });
    }
    expect(requestForToolCall('NotebookEdit', { notebook_path: '/tmp/n.ipynb' }, context)).toMatchObject({ ok: true, request: { kind: 'write' } });
  });

  it('test_bash_simple_command_maps_to_its_first_word', () => {
    expect(runRequestForCommand('git status --short')).toMatchObject({ kind: 'run', value: 'git', compound: false, commandLine: 'git status --short' });
    expect(runRequestForCommand('  /usr/bin/git log')).toMatchObject({ kind: 'run', value: '/usr/bin/git', compound: false });
  });

  it('test_bash_compound_commands_are_marked', () => {
    for (const command of ['git status; rm -rf /', 'git log && curl x', 'git log | sh', 'echo $(id)', 'echo `id`', 'git log > /etc/x', 'cat < /etc/passwd', 'FOO=1 git', './build.sh', 'git log\nrm x', 'git \\\nlog']) {
      expect(runRequestForCommand(command).compound, command).toBe(true);
    }
  });

  it('test_webfetch_maps_to_net_and_websearch_is_always_asked', () => {
    expect(requestForToolCall('WebFetch', { url: 'https://api.github.com/x', prompt: 'p' }, context)).toEqual({ ok: true, request: { kind: 'net', value: 'api.github.com:443' } });
    expect(requestForToolCall('WebSearch', { query: 'x' }, context)).toMatchObject({ ok: true, request: { kind: 'net', compound: true } });
  });

  it('test_ward_mcp_tools_map_to_connection_and_upstream_tool', () => {
    expect(requestForToolCall('mcp__ward__jira_search', {}, context)).toEqual({ ok: true, request: { kind: 'mcp', value: 'jira/search' } });
    expect(requestForToolCall('mcp__ward__unpinned', {}, context)).toMatchObject({ ok: false, reason: expect.stringContaining('not pinned') });
  });

  it('test_unknown_tools_and_missing_inputs_are_refused', () => {
    expect(requestForToolCall('Task', { prompt: 'x' }, context).ok).toBe(false);
    expect(requestForToolCall('mcp__other__x', {}, context).ok).toBe(false);
    expect(requestForToolCall('Read', {}, context).ok).toBe(false);
  });
});

describe('CLI option rendering', () => {
  it('test_ask_mode_offers_granted_tools_and_asks_about_every_native_call', () => {
    const rules = parsePermissionFlags(['--allow-read=/srv/app', '--deny-read=/srv/app/secret', '--allow-mcp=github/*'], '/');
    expect(renderCliOptions(rules, ROUTES, 'ask')).toEqual({
      tools: ['Read', 'Glob', 'Grep'],
      askTools: ['Read', 'Glob', 'Grep'],
      allowedTools: ['mcp__ward__list_issues'],
      disallowedTools: [],
    });
  });

  it('test_no_grants_offer_no_native_tools', () => {
    expect(renderCliOptions([])).toEqual({ tools: [], askTools: [], allowedTools: [], disallowedTools: [] });
    expect(renderCliOptions([], [], 'ask')).toEqual({ tools: [], askTools: [], allowedTools: [], disallowedTools: [] });
  });

  it('test_only_granted_kinds_offer_their_tools', () => {
    const rules = parsePermissionFlags(['--allow-read=/srv/app', '--allow-run=git'], '/');
    expect(renderCliOptions(rules).tools).toEqual(['Read', 'Glob', 'Grep', 'Bash']);
  });

  it('test_path_and_command_scoped_allow_and_deny_rules', () => {
    const rules = parsePermissionFlags(['--allow-read=/srv/app', '--allow-write=/srv/app/src', '--deny-write=/srv/app/src/secrets', '--allow-run=git', '--allow-net=api.github.com', '--deny-net=evil.com'], '/');
    const options = renderCliOptions(rules);
    expect(options.allowedTools).toEqual(['Read(//srv/app)', 'Read(//srv/app/**)', 'Edit(//srv/app/src)', 'Edit(//srv/app/src/**)', 'Bash(git)', 'Bash(git *)', 'WebFetch(domain:api.github.com)']);
    expect(options.disallowedTools).toEqual(['Edit(//srv/app/src/secrets)', 'Edit(//srv/app/src/secrets/**)', 'WebFetch(domain:evil.com)']);
  });

  it('test_unrenderable_deny_keeps_allow_rules_of_its_kind_out_of_the_cli', () => {
    const rules = parsePermissionFlags(['--allow-read=/srv/app', '--deny-read=/srv/app/we*ird'], '/');
    const options = renderCliOptions(rules);
    expect(options.tools).toContain('Read');
    expect(options.allowedTools).toEqual([]);
  });

  it('test_wildcard_and_port_net_grants_are_left_to_the_approval_tool', () => {
    const rules = parsePermissionFlags(['--allow-net=*.example.com,localhost:8080'], '/');
    expect(renderCliOptions(rules)).toEqual({ tools: ['WebFetch'], askTools: [], allowedTools: [], disallowedTools: [] });
  });

  it('test_mcp_grants_render_the_pinned_tools_they_cover_and_denies_stay_with_the_broker', () => {
    const rules = parsePermissionFlags(['--allow-mcp=github/*', '--deny-mcp=jira/search'], '/');
    expect(renderCliOptions(rules, ROUTES)).toEqual({ tools: [], askTools: [], allowedTools: ['mcp__ward__list_issues'], disallowedTools: [] });
  });
});
