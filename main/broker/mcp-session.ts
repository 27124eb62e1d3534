/**
 * The MCP side of a broker session: the SDK's Server answering tools/list and tools/call for a
 * run over its SessionTransport. Kept apart from broker.ts because the SDK is most of what the
 * broker loads (its schemas alone are hundreds of zod objects): the broker listens and mints
 * capabilities without it, and this module is loaded once the child is spawned, while the CLI
 * starts on the other core (issue 19), or at the latest when the first session opens.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, isInitializeRequest, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { toolUseIdOf, type RunState } from './run-state.js';
import { SessionTransport, type SessionTransportOptions } from './session-transport.js';

export { isInitializeRequest };

export interface McpSession {
  readonly server: Server;
  readonly transport: SessionTransport;
}

/** A session's server and transport for `state`; connected (the caller registers it before the first message). */
export function createMcpSession(state: RunState, sessionId: string, streaming: SessionTransportOptions): McpSession {
  const server = new Server({ name: 'ward', version: '1' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: state.listTools() }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    state.callTool(request.params.name, request.params.arguments, extra.signal, toolUseIdOf(request.params._meta)),
  );
  return { server, transport: new SessionTransport(sessionId, streaming) };
}
