import { describe, expect, it } from 'vitest';
import { pinnedToolRules, renderCliOptions } from '../../main/permissions/native-tools.js';
import { buildCliArgs } from '../../main/runner/argv.js';
import type { PinnedToolRoute } from '../../main/upstreams/types.js';

const BASE = { sessionId: '00000000-0000-4000-8000-000000000000', resume: false, mcpConfigPath: '/run/mcp.json', instructionsPath: '/run/instructions.md', model: 'claude-test' };

describe('the child argv (R3)', () => {
  it('test_a_pinned_tool_whose_connection_or_tool_name_holds_a_hyphen_is_pre_allowed_as_the_cli_spells_it', () => {
    const route: PinnedToolRoute = { exposedName: 'my-conf__add-numbers', upstream: 'my-conf', upstreamName: 'add-numbers', description: '', inputSchema: { type: 'object' }, schemaHash: 'h' };
    const options = renderCliOptions(pinnedToolRules([route]), [route], 'ask');
    const args = buildCliArgs({ ...BASE, pinnedTools: [route.exposedName], allowedRules: options.allowedTools });
    expect(args[args.indexOf('--allowedTools') + 1]).toBe('mcp__ward__my-conf__add-numbers,mcp__ward__my-conf__add-numbers');
  });

  it('test_permission_questions_and_turns_go_over_stdio_never_through_an_mcp_tool_or_an_argument', () => {
    const args = buildCliArgs({ ...BASE, pinnedTools: [] });
    expect(args.slice(args.indexOf('--permission-prompt-tool'), args.indexOf('--permission-prompt-tool') + 2)).toEqual(['--permission-prompt-tool', 'stdio']);
    expect(args.slice(-2)).toEqual(['--input-format', 'stream-json']);
    expect(args).not.toContain('--');
  });

  it('test_a_rule_with_a_separator_or_a_leading_digit_or_hyphen_is_still_refused', () => {
    for (const rule of ['Read(/a),Bash', '1tool', '-tool', 'Bash(a)(b)', 'mcp__ward__x y']) {
      expect(() => buildCliArgs({ ...BASE, pinnedTools: [], allowedRules: [rule] }), rule).toThrow(/invalid permission rule/);
    }
  });
});
