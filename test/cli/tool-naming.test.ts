/**
 * Issue 31: tools of an agent's `--upstream` servers were exposed bare (`mcp__ward__echo`) while
 * connection tools are prefixed (`weather__forecast`). One rule now: `SERVER__TOOL` for both, and
 * the `server/tool` grants and denies still decide the calls. The built `ward`, the real pinned
 * CLI, the stdio fixture server, the scripted provider.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startModelProvider, toolResultsSeen, type ModelProvider } from '../fixtures/model-provider/provider.js';
import { FIXTURE_STDIO } from '../app/runs/agents.js';
import { tempDir } from '../support/temp.js';
import { ward } from '../support/ward-cli.js';

let provider: ModelProvider | undefined;
afterEach(async () => {
  await provider?.close();
  provider = undefined;
});

describe('one naming rule for MCP tools', () => {
  it('test_an_upstream_servers_tools_are_prefixed_by_its_name_as_a_connections_are_and_its_grants_still_decide', async () => {
    const home = tempDir();
    fs.writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ credentialStore: 'file' }));
    provider = await startModelProvider([
      { blocks: [{ type: 'tool_use', name: 'mcp__ward__fx__echo', input: { text: 'pong' } }] },
      { blocks: [{ type: 'text', text: 'It echoed.' }] },
      { blocks: [{ type: 'tool_use', name: 'mcp__ward__fx__echo', input: { text: 'denied-ping' } }] },
      { blocks: [{ type: 'text', text: 'It was refused.' }] },
    ]);
    const env = { HOME: home, WARD_HOME: home, TMPDIR: home, ANTHROPIC_API_KEY: 'sk-ant-api03-naming-0000', WARD_MODEL_BASE_URL: provider.url, WARD_SANDBOX: 'off' };
    const instructions = path.join(home, 'helper.md');
    fs.writeFileSync(instructions, 'Use echo when asked.');
    const created = await ward(['agents', 'create', 'helper', '--instructions-file', instructions, '--upstream', `fx=${process.execPath} --import tsx ${FIXTURE_STDIO}`, '--tool', 'fx/echo'], { env, timeoutMs: 60_000 });
    expect(created.code).toBe(0);
    const shown = JSON.parse((await ward(['agents', 'show', 'helper', '--json'], { env })).stdout) as { spec: { tools: { exposedName: string }[] } };
    expect(shown.spec.tools.map((tool) => tool.exposedName)).toEqual(['fx__echo']);

    const allowed = await ward(['run', '--agent', 'helper', '--', 'echo pong'], { env, timeoutMs: 60_000 });
    expect(allowed.code).toBe(0);
    expect(allowed.stdout).toMatch(/^ {2}→ fx__echo \{"text":"pong"\}\n {2}← fx__echo ok 4 B \d+ ms\nIt echoed\.\n$/);
    const offered = provider.conversationRequests()[0]!.body!.tools!.map((tool) => tool.name).filter((name) => name.startsWith('mcp__ward__'));
    expect(offered).toEqual(['mcp__ward__fx__echo']);

    // A deny grant names the tool as server/tool, as before, and wins over the agent's pin.
    const denied = await ward(['run', '--agent', 'helper', '--new', '--deny-mcp=fx/echo', '--', 'echo again'], { env, timeoutMs: 60_000 });
    expect(denied.code).toBe(0);
    expect(denied.stdout).toMatch(/✗ fx__echo refused: /);
    expect(toolResultsSeen(provider).at(-1)).toMatchObject({ isError: true });
    expect(toolResultsSeen(provider).at(-1)!.text).not.toContain('denied-ping');
  });
});
