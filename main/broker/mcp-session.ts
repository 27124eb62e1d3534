/**
 * The MCP side of the broker: SDK 2's Server answering tools/list and tools/call for a run, in
 * both protocol eras from one definition. A 2025 client (initialize, then Mcp-Session-Id) gets a
 * Server of its own on a SessionTransport; a 2026-07-28 request (server/discover, or any request
 * carrying the per-request `_meta` envelope) is served statelessly by the SDK's modern handler,
 * which owns that revision's checks: the envelope, Mcp-Method/Mcp-Name against the body, the
 * protocol version, removed methods. Kept apart from broker.ts because the SDK is most of what
 * the broker loads: the broker listens and mints capabilities without it, and this module is
 * loaded once the child is spawned, while the CLI starts on the other core (issue 19), or at the
 * latest when the first request needs it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { classifyInboundRequest, createMcpHandler, isInitializeRequest, Server, type CacheHint, type McpHttpHandler } from '@modelcontextprotocol/server';
import { toolUseIdOf, type RunState } from './run-state.js';
import { SessionTransport, type SessionTransportOptions } from './session-transport.js';

export { isInitializeRequest };

export interface McpSession {
  readonly server: Server;
  readonly transport: SessionTransport;
}

/** A run's stateless 2026-07-28 endpoint. */
export interface ModernEndpoint {
  serve(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void>;
  close(): Promise<void>;
}

/**
 * A run's pinned tools never change while it lives (B3), but the list is the run's own: only
 * the holder of its capability may reuse it (private). An hour covers any run's turn.
 */
const TOOLS_CACHE: CacheHint = { ttlMs: 60 * 60_000, cacheScope: 'private' };

function newServer(): Server {
  return new Server({ name: 'ward', version: '1' }, { capabilities: { tools: {} }, cacheHints: { 'tools/list': TOOLS_CACHE, 'server/discover': TOOLS_CACHE } });
}

function serverFor(state: RunState): Server {
  const server = newServer();
  server.setRequestHandler('tools/list', () => ({ tools: state.listTools() }));
  server.setRequestHandler('tools/call', (request, ctx) =>
    state.callTool(request.params.name, request.params.arguments, ctx.mcpReq.signal, toolUseIdOf(request.params._meta)),
  );
  return server;
}

/** A session's server and transport for `state`; connected (the caller registers it before the first message). */
export function createMcpSession(state: RunState, sessionId: string, streaming: SessionTransportOptions): McpSession {
  return { server: serverFor(state), transport: new SessionTransport(sessionId, streaming) };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Whether a POST without a session id belongs to the 2025 era (the SDK's own routing decision). */
export function isLegacyPost(req: IncomingMessage, body: unknown): boolean {
  const outcome = classifyInboundRequest({
    httpMethod: 'POST',
    protocolVersionHeader: header(req, 'mcp-protocol-version'),
    mcpMethodHeader: header(req, 'mcp-method'),
    mcpNameHeader: header(req, 'mcp-name'),
    body,
  });
  return outcome.kind === 'legacy';
}

/**
 * Serves one POST through `handler`, its body already read and parsed by the broker. A JSON
 * answer goes back in one piece with its length; an SSE answer is streamed as it comes. As on a
 * session, a child that hangs up gets nothing more, but its call is not cancelled by that: it
 * finishes and is journaled, so a child killed mid-call leaves the run uncertain, not failed.
 * Stop cancels calls itself (R6).
 */
async function serveOne(handler: McpHttpHandler, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === 'string') headers.set(name, value);
    else if (value !== undefined) for (const item of value) headers.append(name, item);
  }
  headers.delete('content-length');
  const request = new Request(`http://${headers.get('host') ?? '127.0.0.1'}${req.url ?? '/'}`, { method: 'POST', headers });
  const response = await handler.fetch(request, { parsedBody: body });
  const out: Record<string, string> = {};
  for (const [name, value] of response.headers) out[name] = value;
  if (response.body === null || !(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    const text = Buffer.from(await response.arrayBuffer());
    if (!res.destroyed) res.writeHead(response.status, { ...out, 'content-length': String(text.length) }).end(text);
    return;
  }
  res.writeHead(response.status, out);
  res.flushHeaders();
  const reader = response.body.getReader();
  try {
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) if (!res.destroyed) res.write(chunk.value);
  } catch {
    // The run closed with the call still streaming: nothing more to send.
  }
  res.end();
}

/**
 * The stateless endpoint for `state`: each request gets a fresh Server over one exchange. A tool
 * call is always answered as an SSE stream with keep-alive comments, so a 15-minute call never
 * looks idle to the child's HTTP client; everything else is one JSON body.
 */
export function createModernEndpoint(state: RunState, streaming: SessionTransportOptions, maxBodyBytes: number): ModernEndpoint {
  const factory = (): Server => serverFor(state);
  const calls = createMcpHandler(factory, { legacy: 'reject', responseMode: 'sse', keepAliveMs: streaming.keepAliveMs, maxRequestBodySize: maxBodyBytes });
  const others = createMcpHandler(factory, { legacy: 'reject', responseMode: 'auto', maxRequestBodySize: maxBodyBytes });
  return {
    serve: (req, res, body) => {
      const isCall = typeof body === 'object' && body !== null && (body as { method?: unknown }).method === 'tools/call';
      return serveOne(isCall ? calls : others, req, res, body);
    },
    close: async () => {
      await Promise.all([calls.close(), others.close()]);
    },
  };
}

/** What a 2026-07-28 client sends first: the CLI opens its MCP connection with this. */
const DISCOVER = {
  body: {
    jsonrpc: '2.0',
    id: 0,
    method: 'server/discover',
    params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'ward-warm-up', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} } },
  },
  headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'server/discover' },
} as const;

/**
 * Answers one server/discover on a throwaway endpoint with no run behind it. The SDK compiles its
 * schemas and Node loads its fetch classes at their first use (~150 ms on a loaded machine): the
 * broker calls this once the child is spawned, so that happens while the CLI starts, not while the
 * CLI waits for the broker's first answer (issue 29). Nothing of it is reachable from outside.
 * Returns what it got, so a test can tell that it took the path a real discover takes.
 */
export async function warmUp(): Promise<{ readonly classified: string; readonly status: number; readonly answer: string }> {
  const { body, headers } = DISCOVER;
  const classified = classifyInboundRequest({ httpMethod: 'POST', protocolVersionHeader: headers['mcp-protocol-version'], mcpMethodHeader: headers['mcp-method'], body }).kind;
  const handler = createMcpHandler(newServer, { legacy: 'reject', responseMode: 'auto' });
  try {
    const response = await handler.fetch(new Request('http://127.0.0.1/warm-up', { method: 'POST', headers }), { parsedBody: body });
    return { classified, status: response.status, answer: await response.text() };
  } finally {
    await handler.close();
  }
}
