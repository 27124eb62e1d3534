import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { claudeConfigDir, conversationWorkspace } from '../../../main/app/runs/workspace.js';
import { GrantStore } from '../../../main/permissions/grant-store.js';
import { verifyPinnedCli } from '../../../main/runner/pin.js';
import { findInnerProcess } from '../../../main/runner/process-tree.js';
import { CLI_ENV_NAMES } from '../../support/child-env.js';
import { publishToolAgent } from './agents.js';
import { closeHarnessesAfterEach, CANARY_KEY, payloads, procEntries, startHarness, type Harness } from './harness.js';
import { until } from '../../support/wait.js';

let harness: Harness | undefined;
closeHarnessesAfterEach();

describe('secrets stay out of argv, the environment, the database and the journal (C3, R2)', () => {
  it('test_s4_the_canary_model_key_and_the_capabilities_never_reach_argv_the_database_or_the_journal_the_child_holds_only_a_run_capability', async () => {
    const slow = { blocks: [{ type: 'text' as const, text: 'one two three four five six seven eight nine ten' }], deltaDelayMs: 150 };
    harness = await startHarness([{ blocks: [{ type: 'text', text: 'First.' }] }, slow]);
    // An agent with MCP tools: its CLI holds a broker capability too (an agent without gets no MCP server).
    await publishToolAgent(harness);
    const first = harness.service.startTurn({ namespace: harness.ns, agent: 'tooly', prompt: 'hello' });
    expect((await first.done).state).toBe('succeeded');
    const conversation = harness.core.store(harness.ns).conversations.get(first.conversationId);

    const second = harness.service.startTurn({ namespace: harness.ns, conversationId: first.conversationId, prompt: 'again' });
    await until(() => harness!.provider.conversationRequests().length === 2, 'the second model call');
    // The CLI itself, inside the sandbox's wrappers.
    const pinned = await verifyPinnedCli();
    await until(() => findInnerProcess(second.childPid()!, pinned.path) !== null, 'the CLI inside the sandbox');
    const pid = findInnerProcess(second.childPid()!, pinned.path)!;
    const argv = procEntries(pid, 'cmdline');
    const environ = procEntries(pid, 'environ');
    // Its working folder is the conversation's workspace inside the namespace's data.
    expect(fs.readlinkSync(`/proc/${pid}/cwd`)).toBe(conversationWorkspace(harness.home, harness.ns, conversation));
    // S4: the child's key is the run's gateway capability, not the model key.
    const gatewayKey = environ.find((entry) => entry.startsWith('ANTHROPIC_API_KEY='))!.slice('ANTHROPIC_API_KEY='.length);
    const gatewayUrl = environ.find((entry) => entry.startsWith('ANTHROPIC_BASE_URL='))!.slice('ANTHROPIC_BASE_URL='.length);
    expect(gatewayKey).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(gatewayUrl).toBe(`http://127.0.0.1:${new URL(gatewayUrl).port}/runs/${second.runId}`);
    expect(environ).toContain(`CLAUDE_CONFIG_DIR=${claudeConfigDir(harness.home, harness.ns, first.conversationId)}`);
    const [runDir] = fs.readdirSync(harness.tmpRoot).map((name) => path.join(harness!.tmpRoot, name));
    const mcpConfigText = fs.readFileSync(path.join(runDir!, 'mcp.json'), 'utf8');
    const mcpConfig = JSON.parse(mcpConfigText) as { mcpServers: { ward: { headers: { Authorization: string } } } };
    // While the run lives, the capability opens the broker: the check after the run means something.
    const duringRun = await fetch((JSON.parse(mcpConfigText) as { mcpServers: { ward: { url: string } } }).mcpServers.ward.url, {
      method: 'POST',
      headers: { authorization: mcpConfig.mcpServers.ward.headers.Authorization, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '1' } } }),
    });
    expect(duringRun.status).toBe(200);
    const capability = mcpConfig.mcpServers.ward.headers.Authorization.replace('Bearer ', '');
    expect(capability).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(fs.statSync(runDir!).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.join(runDir!, 'mcp.json')).mode & 0o777).toBe(0o600);
    expect((await second.done).state).toBe('succeeded');

    // R4: the second turn resumes; R3: the locked-down flags, no bypass.
    expect(argv.slice(argv.indexOf('--resume'), argv.indexOf('--resume') + 2)).toEqual(['--resume', conversation.cliSessionId]);
    expect(argv).not.toContain('--session-id');
    for (const flag of ['--strict-mcp-config', '--disable-slash-commands', '--setting-sources', '--permission-prompt-tool']) expect(argv).toContain(flag);
    // The prompt is never an argument: turns and permission answers come on stdin.
    expect(argv.slice(-2)).toEqual(['--input-format', 'stream-json']);
    expect(argv.slice(argv.indexOf('--permission-prompt-tool'), argv.indexOf('--permission-prompt-tool') + 2)).toEqual(['--permission-prompt-tool', 'stdio']);
    expect(argv.join(' ')).not.toMatch(/dangerously|bypass|--permission-mode/i);
    expect(argv.join('\n')).not.toContain(CANARY_KEY);
    expect(argv.join('\n')).not.toContain(capability);
    expect(argv.join('\n')).not.toContain(gatewayKey);

    const names = environ.map((entry) => entry.slice(0, entry.indexOf('=')));
    // A fixed list, not the code's own: widening what Ward passes fails here.
    expect(names.filter((name) => !CLI_ENV_NAMES.has(name))).toEqual([]);
    expect(names).not.toContain('SOMETHING_SECRET');
    expect(names).not.toContain('LD_PRELOAD');
    expect(names).not.toContain('NO_PROXY');
    expect(environ.join('\n')).not.toContain(CANARY_KEY);
    expect(environ).toContain('DISABLE_TELEMETRY=1');
    expect(environ).toContain('CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1');

    // Neither secret is in the database files or the journal.
    const store = harness.core.store(harness.ns);
    store.db.pragma('wal_checkpoint(TRUNCATE)');
    for (const file of [store.file, `${store.file}-wal`]) {
      if (!fs.existsSync(file)) continue;
      const bytes = fs.readFileSync(file);
      expect(bytes.includes(CANARY_KEY)).toBe(false);
      expect(bytes.includes(capability)).toBe(false);
    }
    const journal = JSON.stringify(harness.events(first.conversationId));
    expect(journal).not.toContain(CANARY_KEY);
    expect(journal).not.toContain(capability);
    expect(journal).not.toContain(gatewayKey);
    // The provider saw the real key, and never the capability; once the run ended the capability is dead (G1).
    expect(harness.provider.conversationRequests().map((request) => request.headers['x-api-key'])).toEqual([CANARY_KEY, CANARY_KEY]);
    expect(JSON.stringify(harness.provider.requests)).not.toContain(gatewayKey);
    const replayed = await fetch(`${gatewayUrl}/v1/messages`, { method: 'POST', headers: { 'x-api-key': gatewayKey, 'content-type': 'application/json' }, body: '{}' });
    expect(replayed.status).toBe(404);
    // B1/B7: the broker capability of the finished run opens nothing either (issue 12 #21).
    const brokerUrl = (JSON.parse(mcpConfigText) as { mcpServers: { ward: { url: string } } }).mcpServers.ward.url;
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'replay', version: '1' } } };
    const afterRun = await fetch(brokerUrl, { method: 'POST', headers: { authorization: `Bearer ${capability}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(initialize) });
    expect(afterRun.status).toBe(404);
    expect(fs.readdirSync(harness.tmpRoot)).toEqual([]);
  });
});

describe("text the model, the CLI or the provider chose is journaled without the turn's secrets (C3)", () => {
  it('test_a_provider_error_that_echoes_the_model_key_leaves_no_key_in_the_run_state_or_the_journal', async () => {
    const echoed = { kind: 'http_error' as const, status: 400, errorType: 'invalid_request_error', message: `key ${CANARY_KEY} is not allowed this model` };
    harness = await startHarness([echoed, echoed, echoed]);
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'hello' });
    const outcome = await handle.done;
    expect(outcome).toMatchObject({ state: 'failed', reason: expect.stringContaining('[redacted] is not allowed this model') });
    expect(harness.core.store(harness.ns).runs.get(handle.runId).reason).not.toContain(CANARY_KEY);
    expect(JSON.stringify(harness.events(handle.conversationId))).not.toContain(CANARY_KEY);
  });

  it('test_a_turn_started_with_its_preflight_as_ward_run_and_the_desktop_start_it_redacts_an_echoed_key_too', async () => {
    // RunService.start (preflight, then the turn) is how ward run and the desktop start a turn.
    const echoed = { kind: 'http_error' as const, status: 400, errorType: 'invalid_request_error', message: `key ${CANARY_KEY} is not allowed this model` };
    harness = await startHarness([echoed, echoed, echoed]);
    const handle = await harness.service.start({ namespace: harness.ns, prompt: 'hello' });
    const outcome = await handle.done;
    expect(outcome).toMatchObject({ state: 'failed', reason: expect.stringContaining('[redacted] is not allowed this model') });
    expect(JSON.stringify(harness.events(handle.conversationId))).not.toContain(CANARY_KEY);
    expect(payloads(harness.events(handle.conversationId), 'model_call').length).toBeGreaterThan(0);
  });

  it('test_a_permission_check_on_a_path_the_model_chose_leaves_no_key_in_the_journal', async () => {
    const asked = `/tmp/ward-canary-read/${CANARY_KEY}.txt`;
    harness = await startHarness([{ blocks: [{ type: 'tool_use', name: 'Read', input: { file_path: asked } }] }, { blocks: [{ type: 'text', text: 'denied' }] }]);
    await publishToolAgent(harness);
    // Read is offered (granted in another folder), so this read is asked about, and nobody answers.
    const store = harness.core.store(harness.ns);
    new GrantStore(store.db).add({ scope: 'agent', agentId: store.agents.get('tooly').agentId, effect: 'allow', kind: 'read', value: harness.home, grantedBy: 'test' });
    const handle = harness.service.startTurn({ namespace: harness.ns, agent: 'tooly', prompt: 'read it' });
    expect((await handle.done).state).toBe('succeeded');
    const events = harness.events(handle.conversationId);
    expect(payloads(events, 'permission_decision')).toEqual([expect.objectContaining({ tool: 'Read', decision: 'deny', value: '/tmp/ward-canary-read/[redacted].txt' })]);
    expect(JSON.stringify(events)).not.toContain(CANARY_KEY);
  });
});
