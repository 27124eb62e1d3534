/**
 * Agents built from connection tools, through the built `ward` command: `ward agents create
 * --tool CONNECTION/TOOL` pins the connection's tool, and `ward run` calls it through the broker
 * and the connection, or refuses to start (before the CLI is spawned) when the pin no longer
 * holds (B3).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { toolResultsIn, type ModelProvider } from '../fixtures/model-provider/provider.js';
import { startProtectedServer, type ProtectedServer } from '../fixtures/mcp-oauth/protected-server.js';
import { FIXTURE_STDIO } from '../app/runs/agents.js';
import { ward, type WardResult } from '../support/ward-cli.js';
import { STDIO_SERVER, loginPlayingBrowser, pids, runnableHome } from './support.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

interface Setup {
  readonly home: string;
  readonly env: NodeJS.ProcessEnv;
  readonly provider: ModelProvider;
  readonly instructions: string;
  ward(args: readonly string[], input?: string): Promise<WardResult>;
}

async function setup(): Promise<Setup> {
  const { home, env, provider, instructions } = await runnableHome('ward-agent-run-');
  return { home, env, provider, instructions, ward: (args, input) => ward(args, { env, input, timeoutMs: 90_000 }) };
}

/** `ward connections add local` for the SDK stdio fixture server, optionally with its tool list in a file and a file its pids are appended to. */
async function addLocal(s: Setup, toolsFile?: string, pidFile?: string, name = 'local'): Promise<void> {
  const args = ['connections', 'add', name, '--command', process.execPath, '--arg', STDIO_SERVER];
  if (toolsFile !== undefined) args.push('--arg=--tools-file', '--arg', toolsFile);
  if (pidFile !== undefined) args.push('--arg=--pid-file', '--arg', pidFile);
  const added = await s.ward(args);
  expect(added.code, added.stderr).toBe(0);
  const listed = await s.ward(['connections', 'tools', name]);
  expect(listed.code, listed.stderr).toBe(0);
}

function echoThen(text: string, provider: ModelProvider, tool = 'mcp__ward__local__echo'): void {
  provider.push({ blocks: [{ type: 'tool_use', name: tool, input: { text } }] }, { blocks: [{ type: 'text', text: `done: ${text}` }] });
}

function events(stdout: string): Array<{ conversationId: string; type: string; payload: Record<string, unknown> }> {
  return stdout
    .trim()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { conversationId: string; type: string; payload: Record<string, unknown> });
}

const ECHO = { name: 'echo', description: 'Echoes text', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } };

// Each test is several `ward` commands and up to three real runs: 20-40 s on a machine at load 15,
// so the suite's 60 s default left no margin (three timed out there, all passing alone).
describe('agents with connection tools (ward agents create --tool CONNECTION/TOOL, ward run)', { timeout: 180_000 }, () => {
  it('test_pins_conn_echo_with_its_schema_hash_and_ward_run_calls_it_through_the_broker_and_the_connection', async () => {
    const s = await setup();
    await addLocal(s);
    const created = await s.ward(['agents', 'create', 'helper', '--instructions-file', s.instructions, '--tool', 'local/echo']);
    expect(created.stderr).toBe('');
    expect(created.stdout).toBe('published helper@1 with 1 pinned tool(s): local/echo\n');
    const shown = JSON.parse((await s.ward(['agents', 'show', 'helper', '--json'])).stdout) as { spec: { tools: Array<Record<string, unknown>> } };
    expect(shown.spec.tools).toEqual([
      { source: 'connection', connection: 'local', name: 'echo', exposedName: 'local__echo', description: 'Echoes text', inputSchema: ECHO.inputSchema, schemaHash: expect.stringMatching(/^[0-9a-f]{64}$/) },
    ]);

    echoThen('pong-via-connection', s.provider);
    const run = await s.ward(['run', '--json', '--agent', 'helper', '--', 'echo please']);
    expect(run.code, run.stderr).toBe(0);
    const journal = events(run.stdout);
    expect(journal.find((event) => event.type === 'tool_result')?.payload).toMatchObject({ tool: 'local__echo', ok: true });
    expect(journal.at(-1)).toMatchObject({ type: 'run_finished', payload: { state: 'succeeded' } });
    const second = s.provider.conversationRequests()[1]!;
    expect(JSON.stringify(toolResultsIn(second))).toContain('pong-via-connection');
    expect(second.body?.tools?.map((tool) => tool.name)).toContain('mcp__ward__local__echo');
  });

  it('test_a_connection_named_with_a_hyphen_runs_its_pinned_tool_the_cli_accepts_the_hyphenated_rule', async () => {
    const s = await setup();
    await addLocal(s, undefined, undefined, 'my-conf');
    expect((await s.ward(['agents', 'create', 'helper', '--instructions-file', s.instructions, '--tool', 'my-conf/echo'])).code).toBe(0);
    echoThen('pong-hyphen', s.provider, 'mcp__ward__my-conf__echo');
    const run = await s.ward(['run', '--json', '--agent', 'helper', '--', 'echo please']);
    expect(run.code, run.stderr).toBe(0);
    expect(events(run.stdout).find((event) => event.type === 'tool_result')?.payload).toMatchObject({ tool: 'my-conf__echo', ok: true });
    expect(JSON.stringify(toolResultsIn(s.provider.conversationRequests()[1]!))).toContain('pong-hyphen');
  });

  it('test_refuses_a_tool_that_is_unknown_or_turned_off_when_creating_the_agent_naming_why', async () => {
    const s = await setup();
    await addLocal(s);
    expect(await s.ward(['agents', 'create', 'a', '--instructions-file', s.instructions, '--tool', 'nowhere/echo'])).toMatchObject({
      code: 5,
      stderr: expect.stringContaining('there is no inline upstream or connection named nowhere'),
    });
    expect(await s.ward(['agents', 'create', 'a', '--instructions-file', s.instructions, '--tool', 'local/nope'])).toMatchObject({
      code: 5,
      stderr: expect.stringMatching(/connection local has no tool "nope" \(it lists: big, echo, /),
    });
    expect((await s.ward(['connections', 'tools', 'local', '--disable', 'echo'])).code).toBe(0);
    expect(await s.ward(['agents', 'create', 'a', '--instructions-file', s.instructions, '--tool', 'local/echo'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('tool local/echo is turned off; turn it on with "ward --namespace default connections tools local --enable echo"'),
    });
    expect((await s.ward(['agents', 'list'])).stdout).toMatch(/^no agents in namespace default yet; publish one with "ward --namespace default agents create NAME --instructions-file FILE"\n$/);
  });

  it('test_a_tool_turned_off_or_a_connection_removed_after_publishing_the_run_is_refused_before_anything_starts_with_the_reason', async () => {
    const s = await setup();
    const pidFile = path.join(s.home, 'server.pids');
    await addLocal(s, undefined, pidFile);
    expect((await s.ward(['agents', 'create', 'helper', '--instructions-file', s.instructions, '--tool', 'local/echo'])).code).toBe(0);
    expect((await s.ward(['connections', 'tools', 'local', '--disable', 'echo'])).code).toBe(0);
    const started = pids(pidFile).length;

    echoThen('never', s.provider);
    const run = await s.ward(['run', '--agent', 'helper', '--', 'echo please']);
    // Refused before any conversation or run is created (issue 16 #7), with the literal command that fixes it.
    expect(run.code).toBe(2);
    expect(run.stderr).toBe('ward run: agent helper@1 pins local/echo, which is turned off; turn it on with "ward --namespace default connections tools local --enable echo"\n');
    // Neither the CLI (the model was never asked anything) nor the connection's server started.
    expect(s.provider.requests).toEqual([]);
    expect(pids(pidFile)).toHaveLength(started);
    expect((await s.ward(['conversations', '--json'])).stdout).toBe('');

    expect((await s.ward(['connections', 'remove', 'local'])).code).toBe(0);
    const removed = await s.ward(['run', '--agent', 'helper', '--', 'echo please']);
    expect(removed.code).toBe(5);
    expect(removed.stderr).toBe(
      'ward run: agent helper@1 pins local/echo, but there is no connection named local any more; add it again ("ward --namespace default connections add local ..."), or publish a version of the agent without it\n',
    );
    expect(s.provider.requests).toEqual([]);
    expect((await s.ward(['conversations', '--json'])).stdout).toBe('');
  });

  it('test_a_schema_changed_upstream_after_publishing_the_run_is_refused_with_re_pin_after_re_pinning_and_republishing_it_runs', async () => {
    const s = await setup();
    const toolsFile = path.join(s.home, 'tools.json');
    fs.writeFileSync(toolsFile, JSON.stringify([ECHO]));
    await addLocal(s, toolsFile);
    expect((await s.ward(['agents', 'create', 'helper', '--instructions-file', s.instructions, '--tool', 'local/echo'])).code).toBe(0);
    // The server now asks for one more argument; nobody has listed its tools since.
    fs.writeFileSync(toolsFile, JSON.stringify([{ ...ECHO, inputSchema: { ...ECHO.inputSchema, properties: { text: { type: 'string' }, loud: { type: 'boolean' } } } }]));

    echoThen('after-repin', s.provider);
    const refused = await s.ward(['run', '--agent', 'helper', '--', 'echo please']);
    // Refused before any conversation or run exists (exit 2, as for a tool turned off), not a failed run.
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe('ward run: agent helper@1 pins local/echo, whose input schema changed since it was pinned; re-pin it with "ward --namespace default connections tools local --repin echo" and publish a new version of the agent with --tool local/echo\n');
    expect(s.provider.requests).toEqual([]);
    expect((await s.ward(['conversations', '--json'])).stdout).toBe('');
    // Ward learnt it too: the connection shows the tool as changed.
    expect((await s.ward(['connections', 'tools', 'local'])).stdout).toMatch(/local__echo .*schema/);

    expect((await s.ward(['connections', 'tools', 'local', '--repin', 'echo'])).code).toBe(0);
    // Re-pinning the connection does not change the published version: it still refuses.
    expect((await s.ward(['run', '--agent', 'helper', '--', 'echo please'])).stderr).toContain('whose input schema changed since it was pinned');
    expect((await s.ward(['agents', 'create', 'helper', '--instructions-file', s.instructions, '--tool', 'local/echo'])).stdout).toBe('published helper@2 with 1 pinned tool(s): local/echo\n');
    const run = await s.ward(['run', '--agent', 'helper', '--', 'echo please']);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.stringify(toolResultsIn(s.provider.conversationRequests()[1]!))).toContain('after-repin');
  });

  it('test_a_conversation_keeps_its_pinned_agent_version_when_the_agent_is_republished', async () => {
    const s = await setup();
    await addLocal(s);
    expect((await s.ward(['agents', 'create', 'helper', '--instructions-file', s.instructions, '--tool', 'local/echo'])).code).toBe(0);
    echoThen('first', s.provider);
    const first = await s.ward(['run', '--json', '--agent', 'helper', '--', 'echo first']);
    expect(first.code, first.stderr).toBe(0);
    const conversation = events(first.stdout)[0]!.conversationId;

    // Version 2 pins a different tool of the same connection.
    expect((await s.ward(['agents', 'create', 'helper', '--instructions-file', s.instructions, '--tool', 'local/big'])).stdout).toBe('published helper@2 with 1 pinned tool(s): local/big\n');

    echoThen('second', s.provider);
    const resumed = await s.ward(['run', '--json', '--conversation', conversation, '--', 'echo again']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(events(resumed.stdout)[0]).toMatchObject({ type: 'run_started', payload: { agent: 'helper', agentVersion: 1 } });
    const requests = s.provider.conversationRequests();
    expect(JSON.stringify(toolResultsIn(requests[3]!))).toContain('second');
    expect(requests[2]!.body?.tools?.map((tool) => tool.name)).toContain('mcp__ward__local__echo');
    expect(requests[2]!.body?.tools?.map((tool) => tool.name)).not.toContain('mcp__ward__local__big');

    s.provider.push({ blocks: [{ type: 'text', text: 'new conversation' }] });
    const fresh = await s.ward(['run', '--json', '--agent', 'helper', '--', 'hello']);
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(events(fresh.stdout)[0]).toMatchObject({ type: 'run_started', payload: { agentVersion: 2 } });
    expect(requests.length + 1).toBe(s.provider.conversationRequests().length);
    expect(s.provider.conversationRequests().at(-1)!.body?.tools?.map((tool) => tool.name)).toContain('mcp__ward__local__big');
  });

  it('test_a_mixed_agent_inline_upstream_and_two_connections_one_oauth_protected_calls_all_three_in_one_run_the_token_reaches_only_its_server', async () => {
    const s = await setup();
    const remote: ProtectedServer = await startProtectedServer();
    closers.push(() => remote.close());
    await addLocal(s);
    expect((await s.ward(['connections', 'add', 'remote', '--url', remote.url])).code).toBe(0);
    const signedIn = await loginPlayingBrowser(s.env, 'remote');
    expect(signedIn.code, signedIn.stderr).toBe(0);
    const created = await s.ward([
      'agents', 'create', 'mixed', '--instructions-file', s.instructions,
      '--upstream', `fx=${process.execPath} --import tsx ${FIXTURE_STDIO}`,
      '--tool', 'fx/echo', '--tool', 'local/echo', '--tool', 'remote/echo',
    ]);
    expect(created.stdout, created.stderr).toBe('published mixed@1 with 3 pinned tool(s): fx/echo, local/echo, remote/echo\n');

    s.provider.push(
      {
        blocks: [
          { type: 'tool_use', name: 'mcp__ward__fx__echo', input: { text: 'inline-1' } },
          { type: 'tool_use', name: 'mcp__ward__local__echo', input: { text: 'local-2' } },
          { type: 'tool_use', name: 'mcp__ward__remote__echo', input: { text: 'remote-3' } },
        ],
      },
      { blocks: [{ type: 'text', text: 'All three answered.' }] },
    );
    const run = await s.ward(['run', '--json', '--agent', 'mixed', '--', 'call them all']);
    expect(run.code, run.stderr).toBe(0);
    const results = events(run.stdout).filter((event) => event.type === 'tool_result').map((event) => [event.payload.tool, event.payload.ok]);
    expect(results.sort()).toEqual([['fx__echo', true], ['local__echo', true], ['remote__echo', true]]);
    const answered = JSON.stringify(toolResultsIn(s.provider.conversationRequests()[1]!));
    for (const text of ['inline-1', 'local-2', 'remote-3']) expect(answered).toContain(text);

    // Canary: the remote server's access token went to it, and nowhere else a person or the model can see.
    const token = remote.authorizations.at(-1)!.replace(/^Bearer /, '');
    expect(token.length).toBeGreaterThan(20);
    expect(JSON.stringify(s.provider.requests)).not.toContain(token);
    expect(run.stdout + run.stderr).not.toContain(token);
    const replay = await s.ward(['replay', events(run.stdout)[0]!.conversationId, '--json']);
    expect(replay.stdout).toContain('remote__echo');
    expect(replay.stdout).not.toContain(token);
    const databases = fs.readdirSync(s.home, { recursive: true, withFileTypes: true }).filter((file) => file.isFile() && /^ward\.db(-wal)?$/.test(file.name));
    expect(databases.length).toBeGreaterThan(0);
    for (const file of databases) expect(fs.readFileSync(path.join(file.parentPath, file.name)).includes(token)).toBe(false);
  });
});
