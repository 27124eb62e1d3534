/**
 * Ward's one MCP client: a live session to one upstream server, stdio or Streamable HTTP, used by
 * an agent's inline upstreams (upstreams.ts) and by a namespace's connections alike. It connects
 * with a bounded wait, lists tools within bounds, checks a pinned tool's schema hash before every
 * call (B3), makes exactly one attempt per call (B6), and projects and caps each result (B5);
 * every failure is an UpstreamError with a stable code.
 */
import { ProtocolError, ProtocolErrorCode, StreamableHTTPClientTransport, type CallToolResult, type ElicitResult, type FetchLike, type JSONRPCRequest, type Tool, type Transport } from '@modelcontextprotocol/client';
import { AnswerStreams } from './answer-streams.js';
import { type Negotiation, WardClient } from './client.js';
import { cappedFetch } from './capped-fetch.js';
import { ElicitationRefusal, parseElicitation, type Elicitor } from './elicitation.js';
import { EndedOnProbe, UpstreamError, classifyUpstreamError, closedOnProbe, failedOutcome, refusedAnswer } from './errors.js';
import { toolSchemaHash } from './schema-hash.js';
import { type BoundedLog, GroupStdioTransport } from './stdio-transport.js';
import { isPlainObject, projectResult } from './projection.js';
import type { JsonSchema, PinnedToolRoute, ToolOutcome } from './types.js';

export interface SessionLimits {
  /** Spawn or connect, and the MCP handshake. */
  readonly connectTimeoutMs: number;
  readonly listTimeoutMs: number;
  /** One call (B6: 15 min); the broker's own limits apply on top. */
  readonly callTimeoutMs: number;
  readonly maxTools: number;
  readonly maxListPages: number;
  readonly maxSchemaBytes: number;
  readonly maxDescriptionChars: number;
  /** B5: projected results above this are discarded. */
  readonly maxResultBytes: number;
  /** One transport message above this is discarded: a stdio line fails its one call (message_too_large), an HTTP body or SSE event the calls waiting on the session (too_large). */
  readonly maxMessageBytes: number;
  /** How much of a stdio server's stderr is kept in memory. */
  readonly maxStderrBytes: number;
  /** SIGTERM → SIGKILL grace when a stdio server is closed. */
  readonly killGraceMs: number;
}

export const DEFAULT_LIMITS: SessionLimits = {
  connectTimeoutMs: 30_000,
  listTimeoutMs: 30_000,
  callTimeoutMs: 15 * 60_000,
  maxTools: 512,
  maxListPages: 32,
  maxSchemaBytes: 64 * 1024,
  maxDescriptionChars: 4096,
  maxResultBytes: 1024 * 1024,
  maxMessageBytes: 8 * 1024 * 1024,
  maxStderrBytes: 64 * 1024,
  killGraceMs: 2_000,
};

export type SessionTarget =
  | {
      readonly transport: 'stdio';
      /** An executable path or a name looked up on the child's PATH; never run through a shell. */
      readonly command: string;
      readonly args: readonly string[];
      /** The child's complete environment, built from an allowlist (R2). */
      readonly env: Readonly<Record<string, string>>;
      readonly cwd?: string;
      readonly stderr: BoundedLog;
      /** Once the server has exited or never started. */
      readonly onExit?: () => void;
    }
  | {
      readonly transport: 'http';
      readonly url: URL;
      /** Sent with every request (e.g. a static `Authorization`); never logged or reported. */
      readonly headers?: Readonly<Record<string, string>>;
      /** Wraps the capped fetch, e.g. to attach a connection's token and refresh it once (C5). */
      readonly authorize?: (fetch: FetchLike) => FetchLike;
    };

/** A tool as the upstream lists it now, bounded and validated. */
export interface LiveTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  /** The shape of the tool's structured result, when it declares one. */
  readonly outputSchema?: JsonSchema;
  /** Covers both schemas (toolSchemaHash). */
  readonly schemaHash: string;
}

export interface ToolListing {
  readonly tools: readonly LiveTool[];
  /** Tools the server offers that Ward cannot offer on (a bad name, an oversized schema), with why. */
  readonly unusable: readonly { readonly name: string; readonly reason: string }[];
}

interface Listed {
  readonly listing: ToolListing;
  readonly byName: ReadonlyMap<string, LiveTool>;
}

/** Waits for `promise` unless `signal` fires first (the work itself goes on for other waiters). */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

function withDeadline(ms: number, failure: () => UpstreamError): { signal: AbortSignal; clear: () => void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(failure()), ms);
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}

export class McpSession {
  private listed: Listed | undefined;
  private listing: Promise<Listed> | undefined;
  /** Why stdout can no longer be trusted (garbage); the session ends with it. */
  private fault: UpstreamError | undefined;
  private endedWith: UpstreamError | undefined;
  private readonly inFlight = new Set<AbortController>();
  private readonly endListeners: Array<(failure: UpstreamError) => void> = [];
  private readonly client: WardClient;
  private readonly transport: Transport;

  private constructor(
    target: SessionTarget,
    private readonly limits: SessionLimits,
    private readonly unusableName: (tool: string) => string | undefined,
    private readonly elicitor: Elicitor | undefined,
    negotiation: Negotiation,
  ) {
    this.transport = this.makeTransport(target);
    this.client = new WardClient(target.transport, limits, negotiation);
  }

  /**
   * Connects and initializes within the connect bound; the process or session is closed on any
   * failure. `unusableName` says why a tool name cannot be offered (the owner's naming rule);
   * `elicitor` asks the person when the server elicits input during a call. A stdio server that
   * exits on the server/discover probe (servers built on SDKs that end on any request before
   * initialize do) is started once more, from a fresh target (its own sandbox), for the plain
   * 2025 handshake: at most two connect bounds in all.
   */
  static async open(
    source: SessionTarget | (() => Promise<SessionTarget>),
    limits: SessionLimits = DEFAULT_LIMITS,
    unusableName: (tool: string) => string | undefined = () => undefined,
    elicitor?: Elicitor,
  ): Promise<McpSession> {
    const target = (): Promise<SessionTarget> => (typeof source === 'function' ? source() : Promise.resolve(source));
    try {
      return await McpSession.connect(await target(), limits, unusableName, elicitor, 'probe');
    } catch (error) {
      if (!(error instanceof EndedOnProbe)) throw error;
      return McpSession.connect(await target(), limits, unusableName, elicitor, 'initialize');
    }
  }

  private static async connect(
    target: SessionTarget,
    limits: SessionLimits,
    unusableName: (tool: string) => string | undefined,
    elicitor: Elicitor | undefined,
    negotiation: Negotiation,
  ): Promise<McpSession> {
    const session = new McpSession(target, limits, unusableName, elicitor, negotiation);
    const client = session.client;
    client.onclose = () => session.onTransportClosed();
    client.elicit((request, signal) => session.onServerRequest(request, signal));
    const deadline = withDeadline(limits.connectTimeoutMs, () => new UpstreamError('timed_out', 'the server did not finish the MCP handshake in time'));
    try {
      await client.connect(session.transport, { signal: deadline.signal, timeout: limits.connectTimeoutMs });
    } catch (error) {
      const failure = classifyUpstreamError(error, { ended: session.fault ?? session.endedWith, signal: deadline.signal });
      const endedOnProbe = negotiation === 'probe' && target.transport === 'stdio' && !deadline.signal.aborted && session.fault === undefined && closedOnProbe(error);
      await session.close();
      throw endedOnProbe ? new EndedOnProbe(failure) : failure;
    } finally {
      deadline.clear();
    }
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      session.listed = undefined;
      session.listing = undefined;
    });
    return session;
  }

  private makeTransport(target: SessionTarget): Transport {
    if (target.transport === 'stdio') {
      return new GroupStdioTransport({
        command: target.command,
        args: target.args,
        env: target.env,
        ...(target.cwd === undefined ? {} : { cwd: target.cwd }),
        ...(target.onExit === undefined ? {} : { onExit: target.onExit }),
        maxMessageBytes: this.limits.maxMessageBytes,
        stderr: target.stderr,
        killGraceMs: this.limits.killGraceMs,
        onFault: (failure) => this.onFault(failure),
      });
    }
    // An oversized HTTP answer fails the calls waiting on this session; the session itself goes on.
    const capped = cappedFetch(this.limits.maxMessageBytes, (failure) => this.abortInFlight(failure));
    // A stream the server primed with an event id is resumed (SEP-1699): a GET with Last-Event-ID
    // after the server's `retry`, which asks for the rest of the same answer and never re-sends
    // the request (B6). Bounded: three attempts. A call whose answer stream ended for good (no
    // event id, resumption refused or failed three times) fails at once as answer_lost.
    const reconnection = { maxRetries: 3, initialReconnectionDelay: 1_000, maxReconnectionDelay: 10_000, reconnectionDelayGrowFactor: 2 };
    const streams = new AnswerStreams(reconnection.maxRetries, (id, failure) => {
      if (this.endedWith === undefined) this.transport.onmessage?.(refusedAnswer(id, failure));
    });
    return new StreamableHTTPClientTransport(target.url, {
      ...(target.headers === undefined ? {} : { requestInit: { headers: { ...target.headers } } }),
      fetch: streams.watch(target.authorize?.(capped) ?? capped),
      reconnectionOptions: reconnection,
    });
  }

  /** A request from the server: elicitation is the one Ward answers (server → person → server; the model never sees it). */
  private async onServerRequest(request: JSONRPCRequest, signal: AbortSignal): Promise<ElicitResult> {
    if (request.method !== 'elicitation/create') throw new ProtocolError(ProtocolErrorCode.MethodNotFound, 'Method not found');
    let parsed;
    try {
      parsed = parseElicitation(request.params);
    } catch (error) {
      if (!(error instanceof ElicitationRefusal)) throw error;
      this.elicitor?.refused(error.message);
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Ward refuses this elicitation: ${error.message}`);
    }
    if (this.elicitor === undefined) return { action: 'decline' };
    const reply = await this.elicitor.ask(this.client.modern ? { ...parsed, continuesCall: true } : parsed, signal);
    return reply.action === 'accept' ? { action: 'accept', content: { ...reply.content } } : { action: reply.action };
  }

  get pid(): number | undefined {
    return this.transport instanceof GroupStdioTransport ? this.transport.pid : undefined;
  }

  /** Why the session ended, once it has. */
  get ended(): UpstreamError | undefined {
    return this.endedWith;
  }

  /** Called once when the session ends without Ward closing it (crash, garbage, oversize). */
  onEnd(listener: (failure: UpstreamError) => void): void {
    this.endListeners.push(listener);
  }

  private abortInFlight(failure: UpstreamError): void {
    for (const controller of this.inFlight) controller.abort(failure);
  }

  private onFault(failure: UpstreamError): void {
    this.fault ??= failure;
    this.abortInFlight(this.fault);
  }

  private onTransportClosed(): void {
    if (this.endedWith !== undefined) return;
    this.endedWith = this.fault ?? new UpstreamError('closed', 'the server exited or closed the connection');
    this.abortInFlight(this.endedWith);
    for (const listener of this.endListeners) listener(this.endedWith);
  }

  /** Lists every tool now (following pages, bounded), validating names and schema sizes; later calls check against it. */
  async listTools(): Promise<ToolListing> {
    return (await this.startListing()).listing;
  }

  /** The tools as last listed; listed now if never, or if the server said they changed. */
  async tools(signal: AbortSignal): Promise<ToolListing> {
    return (await this.current(signal)).listing;
  }

  private startListing(): Promise<Listed> {
    const listing = this.list();
    this.listing = listing;
    listing.then(
      (listed) => {
        if (this.listing === listing) this.listed = listed;
      },
      () => {
        if (this.listing === listing) this.listing = undefined;
      },
    );
    return listing;
  }

  /** Synchronous once listed: every call looks its tool up here. */
  private current(signal: AbortSignal): Listed | Promise<Listed> {
    return this.listed ?? abortable(this.listing ?? this.startListing(), signal);
  }

  private async list(): Promise<Listed> {
    const tools: LiveTool[] = [];
    const unusable: { name: string; reason: string }[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    const deadline = withDeadline(this.limits.listTimeoutMs, () => new UpstreamError('timed_out', 'the server did not list its tools in time'));
    try {
      for (let page = 0; ; page++) {
        if (page >= this.limits.maxListPages) throw new UpstreamError('too_large', `the tool list has more than ${this.limits.maxListPages} pages`);
        const result = await this.client.listPage(cursor, { signal: deadline.signal, timeout: this.limits.listTimeoutMs });
        for (const tool of result.tools) {
          if (seen.size >= this.limits.maxTools) throw new UpstreamError('too_large', `the server offers more than ${this.limits.maxTools} tools`);
          if (seen.has(tool.name)) throw new UpstreamError('protocol_error', `the server lists the tool ${JSON.stringify(tool.name.slice(0, 64))} twice`);
          seen.add(tool.name);
          const badName = this.unusableName(tool.name);
          if (badName !== undefined) {
            unusable.push({ name: tool.name.slice(0, 128), reason: badName });
            continue;
          }
          const schemaBytes = Buffer.byteLength(JSON.stringify(tool.inputSchema), 'utf8') + Buffer.byteLength(JSON.stringify(tool.outputSchema ?? null), 'utf8');
          if (schemaBytes > this.limits.maxSchemaBytes) {
            unusable.push({ name: tool.name, reason: `its schemas are ${schemaBytes} bytes, more than ${this.limits.maxSchemaBytes}` });
            continue;
          }
          const headerFault = result.headerFaults.get(tool.name);
          if (headerFault !== undefined) {
            unusable.push({ name: tool.name, reason: `its x-mcp-header declaration is malformed (${headerFault})` });
            continue;
          }
          const schemas = { inputSchema: tool.inputSchema as JsonSchema, ...(tool.outputSchema === undefined ? {} : { outputSchema: tool.outputSchema as JsonSchema }) };
          tools.push({ name: tool.name, description: (tool.description ?? '').slice(0, this.limits.maxDescriptionChars), ...schemas, schemaHash: toolSchemaHash(schemas) });
        }
        if (this.fault !== undefined) throw this.fault;
        cursor = result.nextCursor;
        if (cursor === undefined) break;
      }
    } catch (error) {
      throw classifyUpstreamError(error, { ended: this.fault ?? this.endedWith, signal: deadline.signal });
    } finally {
      deadline.clear();
    }
    return { listing: { tools, unusable }, byName: new Map(tools.map((tool) => [tool.name, tool])) };
  }

  /**
   * One call of a pinned tool: refused unless the server lists it now with the schema hash it was
   * pinned with (B3); one attempt, never retried (B6); the result projected and capped (B5).
   */
  async call(route: PinnedToolRoute, args: Record<string, unknown>, signal: AbortSignal): Promise<ToolOutcome> {
    if (this.endedWith !== undefined) return failedOutcome(this.endedWith);
    const controller = new AbortController();
    const forward = (): void => controller.abort(signal.reason);
    if (signal.aborted) forward();
    else signal.addEventListener('abort', forward, { once: true });
    this.inFlight.add(controller);
    try {
      const live = (await this.current(controller.signal)).byName.get(route.upstreamName);
      if (live === undefined) return failedOutcome(new UpstreamError('tool_missing', `the server no longer offers ${route.upstreamName}`));
      if (live.schemaHash !== route.schemaHash) return failedOutcome(new UpstreamError('schema_changed', `the input schema of ${route.upstreamName} changed upstream since it was pinned`));
      const result = await this.client.callPinned(live as Tool, args, { signal: controller.signal, timeout: this.limits.callTimeoutMs });
      // An answer that arrived after garbage on the same stream is not trusted.
      if (this.fault !== undefined) return failedOutcome(this.fault);
      if (!isPlainObject(result) || !Array.isArray(result.content)) return failedOutcome(new UpstreamError('protocol_error', 'the server sent a malformed result'));
      const projected = projectResult(result as CallToolResult);
      if (projected.bytes > this.limits.maxResultBytes) {
        return failedOutcome(new UpstreamError('too_large', `the result was ${projected.bytes} bytes, more than ${this.limits.maxResultBytes}`));
      }
      return { ok: true, ...projected, isError: result.isError === true };
    } catch (error) {
      return failedOutcome(classifyUpstreamError(error, { ended: this.fault ?? this.endedWith, signal: controller.signal }));
    } finally {
      this.inFlight.delete(controller);
      signal.removeEventListener('abort', forward);
    }
  }

  /** Ends the session: waiting calls fail as closed, a remote session is ended with DELETE (bounded), a stdio server is stopped (its whole process group). */
  async close(): Promise<void> {
    const endedBefore = this.endedWith !== undefined;
    this.endedWith ??= new UpstreamError('closed', 'the connection was closed');
    this.abortInFlight(this.endedWith);
    try {
      if (this.transport instanceof StreamableHTTPClientTransport && this.transport.sessionId !== undefined && !endedBefore) {
        await Promise.race([this.transport.terminateSession().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
      }
      await this.client.close();
    } catch {
      // best effort: the stdio transport kills the process group regardless
    }
  }
}
