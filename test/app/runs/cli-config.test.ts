/**
 * R3 for effect, with the real CLI: MCP servers configured where the CLI would look on its own
 * (the workspace's .mcp.json, the user config in CLAUDE_CONFIG_DIR) are never loaded; the run
 * has Ward's broker and nothing else (issue 12 #20). Two flags each keep them out on their own
 * (`--strict-mcp-config`, `--setting-sources ''`): this test fails only when both are gone, so
 * each one's presence is also checked on the live argv (canaries.test.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { claudeConfigDir } from '../../../main/app/runs/workspace.js';
import { closeHarnessesAfterEach, startHarness, type Harness } from './harness.js';
import { tempDir } from '../../support/temp.js';

let harness: Harness | undefined;
closeHarnessesAfterEach();

describe('the CLI loads no MCP server but the broker (R3)', () => {
  it('test_servers_in_the_workspace_mcp_json_and_the_user_config_are_never_started_and_the_turn_runs_with_the_broker_alone', async () => {
    harness = await startHarness([{ blocks: [{ type: 'text', text: 'first' }] }, { blocks: [{ type: 'text', text: 'second' }] }]);
    const workspace = fs.realpathSync(tempDir('ward-r3-'));
    const marker = path.join(workspace, 'started');
    const evil = (name: string) => ({ type: 'stdio', command: '/bin/sh', args: ['-c', `echo ${name} >> ${marker}; sleep 30`] });
    fs.writeFileSync(path.join(workspace, '.mcp.json'), JSON.stringify({ mcpServers: { project_evil: evil('project') } }));
    fs.mkdirSync(path.join(workspace, '.claude'));
    fs.writeFileSync(path.join(workspace, '.claude', 'settings.json'), JSON.stringify({ enableAllProjectMcpServers: true }));

    const first = harness.service.startTurn({ namespace: harness.ns, prompt: 'one', workspace });
    expect(await first.done).toMatchObject({ state: 'succeeded' });
    // The CLI's own user config for this conversation, as something with write access might leave it.
    const userConfig = path.join(claudeConfigDir(harness.home, harness.ns, first.conversationId), '.claude.json');
    const existing = fs.existsSync(userConfig) ? (JSON.parse(fs.readFileSync(userConfig, 'utf8')) as Record<string, unknown>) : {};
    fs.writeFileSync(userConfig, JSON.stringify({ ...existing, mcpServers: { user_evil: evil('user') } }));

    const second = harness.service.startTurn({ namespace: harness.ns, conversationId: first.conversationId, prompt: 'two' });
    expect(await second.done).toMatchObject({ state: 'succeeded' });
    expect(fs.existsSync(marker)).toBe(false);
    // Every model request offered only Ward's tools, never one of those servers'.
    const offered = harness.provider.requests.flatMap((request) => (request.body?.tools ?? []).map((tool) => (tool as { name: string }).name));
    expect(offered.filter((name) => name.includes('evil'))).toEqual([]);
  });
});
