/** R3: the host compares the child's system/init with what it configured, field by field. */
import { describe, expect, it } from 'vitest';
import { checkInit } from '../../main/runner/init-check.js';
import type { InitMessage } from '../../main/runner/stream-parser.js';

const SESSION = '5f0c7c1e-2b1a-4c3d-9e8f-0a1b2c3d4e5f';
const expected = { sessionId: SESSION, version: '2.1.328', tools: ['mcp__ward__files__read', 'Read'], servesTools: true };
const init = (more: Partial<InitMessage> = {}): InitMessage => ({
  kind: 'init',
  sessionId: SESSION,
  version: '2.1.328',
  model: 'claude-sonnet-4-5',
  tools: ['mcp__ward__files__read', 'Read'],
  mcpServers: [{ name: 'ward', status: 'connected' }],
  ...more,
});

describe('system/init check (R3)', () => {
  it('test_accepts_exactly_what_was_configured', () => {
    expect(checkInit(init(), expected)).toBeNull();
    expect(checkInit(init({ tools: ['Read'], mcpServers: [] }), { ...expected, tools: ['Read'], servesTools: false })).toBeNull();
  });

  it('test_refuses_a_tool_ward_does_not_serve_even_one_named_like_the_old_approval_tool', () => {
    expect(checkInit(init({ tools: ['mcp__ward__files__read', 'Read', 'mcp__ward__approve'] }), expected)).toBe('the CLI offers tools that were not granted: mcp__ward__approve');
  });

  it('test_refuses_wards_broker_loaded_by_a_run_that_did_not_configure_it', () => {
    expect(checkInit(init({ tools: ['Read'] }), { ...expected, tools: ['Read'], servesTools: false })).toBe("the CLI loaded Ward's tool broker, which this run did not configure");
  });

  it('test_refuses_an_extra_mcp_server', () => {
    expect(checkInit(init({ mcpServers: [{ name: 'ward', status: 'connected' }, { name: 'evil', status: 'connected' }] }), expected)).toBe('the CLI loaded MCP servers Ward did not configure: evil');
  });

  it('test_refuses_a_broker_that_is_absent_or_not_connected', () => {
    expect(checkInit(init({ mcpServers: [] }), expected)).toBe("the CLI did not load Ward's tool broker");
    expect(checkInit(init({ mcpServers: [{ name: 'ward', status: 'failed' }] }), expected)).toBe("the CLI could not connect to Ward's tool broker (status failed)");
  });

  it('test_refuses_an_ungranted_tool', () => {
    expect(checkInit(init({ tools: ['mcp__ward__files__read', 'Read', 'Bash'] }), expected)).toBe('the CLI offers tools that were not granted: Bash');
  });

  it('test_refuses_a_missing_pinned_tool', () => {
    expect(checkInit(init({ tools: ['Read'] }), expected)).toBe('the CLI is missing pinned tools: mcp__ward__files__read');
  });

  it('test_refuses_a_wrong_session_id', () => {
    expect(checkInit(init({ sessionId: '00000000-0000-4000-8000-000000000000' }), expected)).toBe(`the CLI reported session 00000000-0000-4000-8000-000000000000, expected ${SESSION}`);
  });

  it('test_refuses_a_cli_that_reports_another_version_than_the_pin', () => {
    expect(checkInit(init({ version: '2.1.329' }), expected)).toBe('the CLI reported version 2.1.329, pinned 2.1.328');
  });
});
