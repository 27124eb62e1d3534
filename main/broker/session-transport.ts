/**
 * One MCP session's Streamable HTTP transport, written against Node's http objects directly.
 *
 * The SDK's own server transport converts every request and response to web streams (through
 * @hono/node-server) and answers each call as an SSE stream; on the broker's hot path that was
 * about half of what the broker added to a tool call. The SDK `Server` still does the protocol
 * (initialize, tools/list, tools/call, cancellation) on top of this; only the HTTP framing is ours.
 * This serves 2025 clients (initialize, then Mcp-Session-Id); 2026-07-28 requests are stateless
 * and go to the SDK's own per-request handler (mcp-session.ts).
 *
 * A request is answered as plain JSON when its answer is ready within `sseAfterMs` (almost every
 * call). A slower one turns into an SSE stream that sends keep-alive comments while the call runs,
 * so a 15-minute tool call never looks idle to the child's HTTP client. Both forms are what the
 * Streamable HTTP spec lets a server choose per request.
 *
 * The broker has already checked peer, Host, Origin, path, capability, body size and session id.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  isInitializeRequest,
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  parseJSONRPCMessage,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCMessage,
  type RequestId,
  type Transport,
  type TransportSendOptions,
} from '@modelcontextprotocol/server';

export interface SessionTransportOptions {
  /** An answer not ready after this long is sent as an SSE stream instead of JSON. */
  readonly sseAfterMs: number;
  /** Interval of SSE keep-alive comments while a call runs. */
  readonly keepAliveMs: number;
}

/** An HTTP request waiting for the answer to the JSON-RPC request it carried. */
interface PendingAnswer {
  readonly res: ServerResponse;
  streaming: boolean;
  /** Until the answer: the switch to SSE, then the keep-alive interval. */
  timer: NodeJS.Timeout | undefined;
}

function replyError(res: ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}): void {
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

function acceptsBoth(req: IncomingMessage): boolean {
  const accept = req.headers.accept ?? '';
  return accept.includes('application/json') && accept.includes('text/event-stream');
}

function isJsonContentType(req: IncomingMessage): boolean {
  const type = (req.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase();
  return type === 'application/json';
}

export class SessionTransport implements Transport {
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;

  private readonly pending = new Map<RequestId, PendingAnswer>();
  private initialized = false;
  private closed = false;

  constructor(
    readonly sessionId: string,
    private readonly options: SessionTransportOptions,
  ) {}

  async start(): Promise<void> {
    // Requests arrive through handlePost; there is nothing to open.
  }

  /** A POST carrying one JSON-RPC message (batches were removed from the protocol in 2025-06-18). */
  handlePost(req: IncomingMessage, res: ServerResponse, body: unknown): void {
    if (this.closed) return replyError(res, 404, -32001, 'Session not found');
    if (!acceptsBoth(req)) return replyError(res, 406, -32000, 'Not Acceptable: the client must accept both application/json and text/event-stream');
    if (!isJsonContentType(req)) return replyError(res, 415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
    if (Array.isArray(body)) return replyError(res, 400, -32600, 'Invalid Request: JSON-RPC batches are not supported');
    let message: JSONRPCMessage;
    try {
      message = parseJSONRPCMessage(body);
    } catch {
      return replyError(res, 400, -32700, 'Parse error: Invalid JSON-RPC message');
    }

    // The method test first: isInitializeRequest is a zod parse, and failing it on every call costs ~4 µs.
    if ('method' in message && message.method === 'initialize' && isInitializeRequest(message)) {
      if (this.initialized) return replyError(res, 400, -32600, 'Invalid Request: Server already initialized');
      this.initialized = true;
    } else {
      const version = req.headers['mcp-protocol-version'];
      if (typeof version === 'string' && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
        return replyError(res, 400, -32000, `Bad Request: Unsupported protocol version: ${version}`);
      }
    }

    if (!isJSONRPCRequest(message)) {
      // Notifications and responses need no answer beyond an acknowledgement.
      res.writeHead(202, { 'mcp-session-id': this.sessionId }).end();
      this.onmessage?.(message);
      return;
    }
    if (this.pending.has(message.id)) return replyError(res, 409, -32600, `Invalid Request: request id ${JSON.stringify(message.id)} is already in flight`);

    const answer: PendingAnswer = { res, streaming: false, timer: undefined };
    answer.timer = setTimeout(() => this.startStream(answer), this.options.sseAfterMs);
    this.pending.set(message.id, answer);
    // A client that went away gets nothing more; the call itself finishes and is journaled.
    res.once('close', () => {
      if (this.pending.get(message.id) === answer) this.finish(message.id, answer);
    });
    this.onmessage?.(message);
  }

  /** DELETE ends the session (the client is done with it). */
  async handleDelete(res: ServerResponse): Promise<void> {
    await this.close();
    res.writeHead(200, { 'mcp-session-id': this.sessionId }).end();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const isAnswer = isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message);
    const requestId = isAnswer ? message.id : options?.relatedRequestId;
    // Without a request to ride on, a message would need the standalone GET stream, which this
    // server does not offer (it sends no unsolicited notifications).
    if (requestId === undefined) return;
    const answer = this.pending.get(requestId);
    if (answer === undefined) return;
    const data = JSON.stringify(message);
    if (!isAnswer) {
      // A notification about a running request (progress): only a stream can carry it.
      this.startStream(answer);
      answer.res.write(`event: message\ndata: ${data}\n\n`);
      return;
    }
    if (answer.streaming) {
      answer.res.end(`event: message\ndata: ${data}\n\n`);
    } else {
      answer.res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data), 'mcp-session-id': this.sessionId });
      answer.res.end(data);
    }
    this.finish(requestId, answer);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const [id, answer] of this.pending) {
      this.finish(id, answer);
      if (answer.streaming) answer.res.end();
      else replyError(answer.res, 404, -32001, 'Session closed');
    }
    this.onclose?.();
  }

  private startStream(answer: PendingAnswer): void {
    if (answer.streaming || answer.res.writableEnded) return;
    answer.streaming = true;
    answer.res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'mcp-session-id': this.sessionId });
    answer.res.flushHeaders();
    clearTimeout(answer.timer);
    answer.timer = setInterval(() => answer.res.write(': keepalive\n\n'), this.options.keepAliveMs);
  }

  private finish(id: RequestId, answer: PendingAnswer): void {
    // Node's timers are one kind: this also stops the keep-alive interval.
    clearTimeout(answer.timer);
    this.pending.delete(id);
  }
}
