/** RunService with an agent whose tools come from a connection: the run opens the namespace's connections and closes them with the run. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAgentVersion } from '../../../main/agents/service.js';
import { claudeConfigDir } from '../../../main/app/runs/workspace.js';
import { openConnections } from '../../../main/connections/index.js';
import { toolResultsSeen } from '../../fixtures/model-provider/provider.js';
import { closeHarnessesAfterEach, payloads, startHarness, types, type Harness } from './harness.js';
import { tempDir } from '../../support/temp.js';
import { pids, stdioSpec } from '../../connections/support.js';
import { filesUnder } from '../../auth/support.js';
import { until } from '../../support/wait.js';
import { alive } from '../../support/processes.js';

closeHarnessesAfterEach();

function start(): Promise<Harness> {
  return startHarness([], { connectionStore: { kind: 'file' } });
}

describe('RunService and connection tools', () => {
  it('test_calls_the_pinned_connection_tool_through_the_broker_and_the_connection_server_it_started_is_gone_when_the_run_settles', async () => {
    const h = await start();
    h.core.store(h.ns);
    const pidFile = path.join(tempDir(), 'server.pids');
    const manager = openConnections(h.core, h.ns, { store: { kind: 'file' } });
    await manager.add(stdioSpec('local', '--pid-file', pidFile));
    await createAgentVersion(h.core.store(h.ns), { name: 'helper', instructions: 'Use echo.', tools: [{ upstream: 'local', tool: 'echo' }] }, h.env, {}, manager);
    await manager.close();
    const beforeRun = pids(pidFile).length;

    h.provider.push({ blocks: [{ type: 'tool_use', name: 'mcp__ward__local__echo', input: { text: 'in-process-5' } }] }, { blocks: [{ type: 'text', text: 'done' }] });
    const handle = h.service.startTurn({ namespace: h.ns, agent: 'helper', prompt: 'echo' });
    expect(await handle.done).toMatchObject({ state: 'succeeded' });
    const events = h.events(handle.conversationId);
    expect(payloads(events, 'tool_result')[0]).toMatchObject({ tool: 'local__echo', ok: true });
    // The run started its own server for the connection, and closed it after the broker drained.
    const started = pids(pidFile).slice(beforeRun);
    expect(started.length).toBeGreaterThan(0);
    await until(() => started.every((pid) => !alive(pid)), 'the connection server started for the run to exit');
  });

  it('test_a_pin_that_no_longer_holds_fails_the_run_with_the_reason_before_the_cli_is_spawned', async () => {
    const h = await start();
    h.core.store(h.ns);
    const manager = openConnections(h.core, h.ns, { store: { kind: 'file' } });
    await manager.add(stdioSpec('local'));
    await createAgentVersion(h.core.store(h.ns), { name: 'helper', instructions: 'Use echo.', tools: [{ upstream: 'local', tool: 'echo' }] }, h.env, {}, manager);
    manager.setToolEnabled('local', 'echo', false);
    await manager.close();

    const handle = h.service.startTurn({ namespace: h.ns, agent: 'helper', prompt: 'echo' });
    expect(await handle.done).toMatchObject({ state: 'failed', reason: expect.stringContaining('agent helper@1 pins local/echo, which is turned off') });
    expect(types(h.events(handle.conversationId))).toEqual(['run_started', 'user_prompt', 'run_finished']);
    expect(h.provider.requests).toEqual([]);
  });

  it('test_a_connection_secret_a_tool_returns_twice_reaches_neither_the_model_nor_the_cli_transcript_nor_the_journal', async () => {
    // Issue 12 #5: a --secret-env value echoed by its own server was stored whole in the result
    // preview; the journal redacted it, yet the model and the CLI's transcript still got it.
    const h = await start();
    h.core.store(h.ns);
    const canary = 'conn-secret-canary-31f7c0';
    const manager = openConnections(h.core, h.ns, { store: { kind: 'file' } });
    await manager.add({ ...stdioSpec('keyed'), secretEnv: ['API_TOKEN'] }, { API_TOKEN: canary });
    await createAgentVersion(h.core.store(h.ns), { name: 'helper', instructions: 'Use getenv.', tools: [{ upstream: 'keyed', tool: 'getenv' }] }, h.env, {}, manager);
    await manager.close();

    h.provider.push({ blocks: [{ type: 'tool_use', name: 'mcp__ward__keyed__getenv', input: { name: 'API_TOKEN', times: 2 } }] }, { blocks: [{ type: 'text', text: 'done' }] });
    const handle = h.service.startTurn({ namespace: h.ns, agent: 'helper', prompt: 'what is the token?' });
    expect(await handle.done).toMatchObject({ state: 'succeeded' });
    expect(toolResultsSeen(h.provider)[0]!.text).toContain('API_TOKEN=[redacted]; API_TOKEN=[redacted]');
    expect(JSON.stringify(h.provider.requests)).not.toContain(canary);
    const transcripts = claudeConfigDir(h.home, h.ns, handle.conversationId);
    const files = filesUnder(transcripts);
    expect(files.some((file) => file.endsWith('.jsonl'))).toBe(true);
    expect(files.filter((file) => fs.readFileSync(file).includes(canary))).toEqual([]);
    const events = h.events(handle.conversationId);
    expect(payloads(events, 'tool_result')[0]).toMatchObject({ tool: 'keyed__getenv', ok: true, preview: expect.stringContaining('API_TOKEN=[redacted]') });
    expect(JSON.stringify(events)).not.toContain(canary);
    expect(fs.readFileSync(h.core.store(h.ns).file).includes(canary)).toBe(false);
  });
});
