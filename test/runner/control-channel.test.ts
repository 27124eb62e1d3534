/**
 * Facts about the pinned CLI's control channel (2.1.328), verified against the real binary with
 * the scripted model (issue 29, direction 2). Ward answers permission questions over it
 * (../app/runs/cli-session-approvals.test.ts); its MCP tools are still served by the loopback HTTP
 * broker, which an sdk server would replace. If a CLI upgrade changes any of this, the test says so.
 *
 * - An MCP server declared `{"type":"sdk","name":…}` in --mcp-config, named in the `initialize`
 *   control request's `sdkMcpServers`, is served by the host: every JSON-RPC message comes as an
 *   `mcp_message` control request on stdout and is answered with a `control_response` carrying
 *   `mcp_response`.
 * - `--permission-prompt-tool stdio` turns each permission question into a `can_use_tool` control
 *   request carrying the tool's name, input and `tool_use_id`; the answer is
 *   `{behavior: "allow", updatedInput}` or `{behavior: "deny", message}`.
 * - Ward's ask rules in --settings still make the CLI ask, for native tools and MCP tools alike.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startModelProvider, toolResultsIn, type ModelProvider } from '../fixtures/model-provider/provider.js';
import { isResult, responseTo, startStreamJsonCli, userLine, type Line, type StreamJsonCli } from '../support/stream-json-cli.js';

const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

interface ControlRequest {
  readonly request_id: string;
  readonly request: Record<string, unknown> & { subtype: string };
}
type JsonRpc = { jsonrpc: '2.0'; id?: number | string; method: string; params?: Record<string, unknown> };

/** A host-side MCP server with one tool, `echo`, answering the CLI's `mcp_message` requests. */
function mcpAnswer(message: JsonRpc, seen: string[]): Record<string, unknown> {
  seen.push(message.method);
  if (message.id === undefined) return { jsonrpc: '2.0', result: {}, id: 0 }; // a notification
  const reply = (result: unknown) => ({ jsonrpc: '2.0', id: message.id, result });
  switch (message.method) {
    case 'initialize':
      return reply({ protocolVersion: message.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'ward', version: '0.0.0' } });
    case 'tools/list':
      return reply({ tools: [{ name: 'echo', description: 'Echoes its text.', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } }] });
    case 'tools/call':
      return reply({ content: [{ type: 'text', text: `echo: ${String((message.params?.arguments as { text?: unknown } | undefined)?.text)}` }] });
    default:
      return { jsonrpc: '2.0', id: message.id, error: { code: -32601, message: `no method ${message.method}` } };
  }
}

/** Answers every control request the CLI sends: MCP messages from `mcpAnswer`, permission questions from `decide`. */
function serveControlRequests(cli: StreamJsonCli, decide: (request: ControlRequest['request']) => Record<string, unknown>) {
  const questions: ControlRequest['request'][] = [];
  const mcpMethods: string[] = [];
  let answered = 0;
  const answer = () => {
    for (; answered < cli.lines.length; answered++) {
      const line = cli.lines[answered] as Line & Partial<ControlRequest>;
      if (line.type !== 'control_request' || line.request === undefined) continue;
      const { request } = line;
      let response: Record<string, unknown>;
      if (request.subtype === 'mcp_message') response = { mcp_response: mcpAnswer(request.message as JsonRpc, mcpMethods) };
      else if (request.subtype === 'can_use_tool') {
        questions.push(request);
        response = decide(request);
      } else continue;
      cli.send({ type: 'control_response', response: { subtype: 'success', request_id: line.request_id, response } });
    }
  };
  cli.child.stdout.on('data', () => setImmediate(answer));
  return { questions, mcpMethods };
}

async function startWithControlChannel(provider: ModelProvider, askTools: readonly string[], decide: (request: ControlRequest['request']) => Record<string, unknown>) {
  const cli = startStreamJsonCli(provider, { mcpServers: { ward: { type: 'sdk', name: 'ward' } }, permissionPromptTool: 'stdio', nativeTools: ['Bash'], askTools });
  closers.push(() => void cli.child.kill('SIGKILL'));
  const served = serveControlRequests(cli, decide);
  cli.send({ type: 'control_request', request_id: 'init-1', request: { subtype: 'initialize', sdkMcpServers: ['ward'] } });
  expect(await cli.next(responseTo('init-1'))).toMatchObject({ response: { subtype: 'success' } });
  return { cli, ...served };
}

describe("the pinned CLI's control channel (stream-json, sdk MCP server, --permission-prompt-tool stdio)", () => {
  it('test_an_sdk_mcp_server_is_served_over_stdout_and_a_tool_call_is_asked_about_with_its_tool_use_id_then_answered', async () => {
    const provider = await startModelProvider([
      { blocks: [{ type: 'tool_use', id: 'toolu_echo_1', name: 'mcp__ward__echo', input: { text: 'over the control channel' } }] },
      { blocks: [{ type: 'text', text: 'Echoed.' }] },
    ]);
    closers.push(() => provider.close());
    const { cli, questions, mcpMethods } = await startWithControlChannel(provider, ['mcp__ward__echo'], (request) => ({ behavior: 'allow', updatedInput: request.input }));

    cli.send(userLine('Echo something.'));
    expect(await cli.next(isResult, 60_000)).toMatchObject({ subtype: 'success', result: 'Echoed.' });

    // The model was offered the host's tool, the CLI asked about the call, then called it through the host.
    const tools = (provider.conversationRequests()[0]!.body as { tools?: { name: string }[] }).tools ?? [];
    expect(tools.map((tool) => tool.name)).toContain('mcp__ward__echo');
    expect(questions).toEqual([expect.objectContaining({ subtype: 'can_use_tool', tool_name: 'mcp__ward__echo', input: { text: 'over the control channel' }, tool_use_id: 'toolu_echo_1' })]);
    expect(mcpMethods).toEqual(expect.arrayContaining(['initialize', 'tools/list', 'tools/call']));
    expect(toolResultsIn(provider.conversationRequests()[1]!)).toEqual([expect.objectContaining({ tool_use_id: 'toolu_echo_1', content: [{ type: 'text', text: 'echo: over the control channel' }] })]);
  });

  it('test_an_ask_rule_makes_the_cli_ask_before_bash_and_a_denial_keeps_the_command_from_running', async () => {
    const provider = await startModelProvider([
      { blocks: [{ type: 'tool_use', id: 'toolu_bash_1', name: 'Bash', input: { command: 'touch planted-by-the-model' } }] },
      { blocks: [{ type: 'text', text: 'It was refused.' }] },
    ]);
    closers.push(() => provider.close());
    const { cli, questions } = await startWithControlChannel(provider, ['Bash'], () => ({ behavior: 'deny', message: 'Refused by the host.' }));

    cli.send(userLine('Make a file.'));
    expect(await cli.next(isResult, 60_000)).toMatchObject({ subtype: 'success', result: 'It was refused.' });

    expect(questions).toEqual([expect.objectContaining({ tool_name: 'Bash', tool_use_id: 'toolu_bash_1', input: expect.objectContaining({ command: 'touch planted-by-the-model' }) })]);
    const [refusal] = toolResultsIn(provider.conversationRequests()[1]!);
    expect(refusal).toMatchObject({ tool_use_id: 'toolu_bash_1', is_error: true });
    expect(JSON.stringify(refusal!.content)).toContain('Refused by the host.');
    expect(fs.existsSync(path.join(cli.workspace, 'planted-by-the-model'))).toBe(false);
  });
});
