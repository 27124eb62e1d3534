/**
 * The upstream MCP servers of one run, behind the broker's UpstreamCaller contract. Owns one
 * SDK client per upstream (stdio child or Streamable HTTP), connects on first use with a bounded
 * wait, checks the pinned schema hash (B3), makes exactly one call attempt (B6), and turns every
 * failure into a stable code with no upstream text in it (B5).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ToolListChangedNotificationSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { PinnedToolRoute, ToolContent, ToolOutcome, UpstreamCaller } from './types.js';
import { callErrorMessage } from './call-errors.js';
import { parseUpstreamDefinitions, type UpstreamDefinition } from './definitions.js';
import { classifyUpstreamError, UpstreamFailure, type UpstreamErrorCode } from './failure.js';
import { cappedFetch } from './capped-fetch.js';
import { schemaHash } from './schema-hash.js';
import { BoundedLog, GroupStdioTransport, stdioEnvironment } from './stdio-transport.js';

export interface UpstreamOptions {
  /** Spawn/handshake of one upstream (default 10 s). */
  readonly connectTimeoutMs?: number;
  /** Backstop for the SDK's own request timeout; the broker's signal normally ends calls first (default 16 min). */
  readonly requestTimeoutMs?: number;
  /** One JSON-RPC message (stdio line, HTTP body or SSE event) above this fails as too_large (default 8 MiB). */
  readonly maxMessageBytes?: number;
  /** Projected results above this fail as too_large (B5, default 1 MiB). */
  readonly maxResultBytes?: number;
  /** How much of a stdio server's stderr is kept in memory (default 64 KiB). */
  readonly maxStderrBytes?: number;
  /** SIGTERM → SIGKILL grace when a stdio server is closed (default 2 s). */
  readonly killGraceMs?: number;
}

export interface Upstreams extends UpstreamCaller {
  /** The upstream's live tool list (connects if needed); throws UpstreamFailure with a stable code. */
  listTools(upstream: string): Promise<Tool[]>;
  /** The tail of a stdio upstream's stderr, for diagnostics shown to the person only. */
  stderr(upstream: string): string;
  /** Process id of a running stdio upstream (for process-tree checks). */
  pid(upstream: string): number | undefined;
  /** Closes every client and kills every stdio server's process group. */
  close(): Promise<void>;
}

type Limits = Required<UpstreamOptions>;

const DEFAULTS: Limits = {
  connectTimeoutMs: 10_000,
  requestTimeoutMs: 16 * 60_000,
  maxMessageBytes: 8 * 1024 * 1024,
  maxResultBytes: 1024 * 1024,
  maxStderrBytes: 64 * 1024,
  killGraceMs: 2_000,
};

/**
 * Schema hashes of listed tools, per schema object. A listing is kept until the server says its
 * tools changed, so every call on it would otherwise hash the same schema again (B3 check).
 */
const liveHashes = new WeakMap<object, string>();

function liveSchemaHash(inputSchema: object): string {
  let hash = liveHashes.get(inputSchema);
  if (hash === undefined) {
    hash = schemaHash(inputSchema);
    liveHashes.set(inputSchema, hash);
  }
  return hash;
}

function failed(code: UpstreamErrorCode): ToolOutcome {
  return { ok: false, errorCode: code, message: callErrorMessage(code) };
}

/** MCP content → text/image only, measured in bytes (B5). */
export function projectResult(result: CallToolResult): { content: ToolContent[]; bytes: number } {
  const content: ToolContent[] = [];
  let bytes = 0;
  const push = (item: ToolContent): void => {
    content.push(item);
    bytes += item.type === 'text' ? Buffer.byteLength(item.text, 'utf8') : item.data.length + item.mimeType.length;
  };
  for (const item of result.content ?? []) {
    if (item.type === 'text') push({ type: 'text', text: item.text });
    else if (item.type === 'image') push({ type: 'image', data: item.data, mimeType: item.mimeType });
    else if (item.type === 'resource' && 'text' in item.resource) push({ type: 'text', text: item.resource.text });
    else if (item.type === 'resource_link') push({ type: 'text', text: `Resource: ${item.uri}` });
    else push({ type: 'text', text: `[${item.type} content omitted]` });
  }
  if (content.length === 0 && result.structuredContent !== undefined) push({ type: 'text', text: JSON.stringify(result.structuredContent) });
  return { content, bytes };
}

class Connection {
  private client: Client | undefined;
  private connecting: Promise<Client> | undefined;
  private tools: Map<string, Tool> | undefined;
  private transport: Transport | undefined;
  private readonly inFlight = new Set<AbortController>();
  readonly log: BoundedLog;
  private closed = false;

  constructor(
    private readonly def: UpstreamDefinition,
    private readonly limits: Limits,
  ) {
    this.log = new BoundedLog(limits.maxStderrBytes);
  }

  get pid(): number | undefined {
    return this.transport instanceof GroupStdioTransport ? this.transport.pid : undefined;
  }

  /** Aborts every call on this connection with one code (first reason wins). */
  private failInFlight(code: UpstreamErrorCode): void {
    for (const controller of this.inFlight) controller.abort(new UpstreamFailure(code));
  }

  private makeTransport(): Transport {
    if (this.def.type === 'stdio') {
      return new GroupStdioTransport({
        command: this.def.command,
        args: this.def.args ?? [],
        env: stdioEnvironment(this.def.env ?? {}),
        ...(this.def.cwd === undefined ? {} : { cwd: this.def.cwd }),
        maxMessageBytes: this.limits.maxMessageBytes,
        stderr: this.log,
        killGraceMs: this.limits.killGraceMs,
      });
    }
    return new StreamableHTTPClientTransport(new URL(this.def.url), {
      requestInit: { headers: { ...this.def.headers } },
      fetch: cappedFetch(this.limits.maxMessageBytes, () => this.failInFlight('too_large')),
      // A dropped stream is reported, never silently resumed or re-sent (B6).
      reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 },
    });
  }

  /** The connected client; one bounded attempt per call, never cached as failed. */
  ready(signal: AbortSignal): Promise<Client> {
    if (this.closed) return Promise.reject(new UpstreamFailure('closed'));
    if (this.client !== undefined) return Promise.resolve(this.client);
    this.connecting ??= this.connect().finally(() => {
      this.connecting = undefined;
    });
    return abortable(this.connecting, signal);
  }

  private async connect(): Promise<Client> {
    const transport = this.makeTransport();
    this.transport = transport;
    const client = new Client({ name: 'ward', version: '1' }, { capabilities: {} });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      this.tools = undefined;
    });
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new UpstreamFailure('timed_out')), this.limits.connectTimeoutMs);
    try {
      await client.connect(transport, { signal: controller.signal, timeout: this.limits.connectTimeoutMs });
    } catch (error) {
      await client.close().catch(() => undefined);
      throw controller.signal.aborted ? controller.signal.reason : error;
    } finally {
      clearTimeout(timer);
    }
    if (this.closed) {
      await client.close().catch(() => undefined);
      throw new UpstreamFailure('closed');
    }
    // Attached only now: a failed handshake is reported by connect(), not as a closed call.
    client.onerror = (error) => {
      if (error instanceof UpstreamFailure) this.failInFlight(error.code);
    };
    client.onclose = () => {
      if (this.client === client) {
        this.client = undefined;
        this.tools = undefined;
      }
      this.failInFlight('closed');
    };
    this.client = client;
    return client;
  }

  async listTools(signal: AbortSignal): Promise<Map<string, Tool>> {
    const client = await this.ready(signal);
    if (this.tools !== undefined) return this.tools;
    const tools = new Map<string, Tool>();
    let cursor: string | undefined;
    // Bounded: a server cannot page us forever.
    for (let page = 0; page < 100; page++) {
      const result = await client.listTools(cursor === undefined ? {} : { cursor }, { signal, timeout: this.limits.connectTimeoutMs });
      for (const tool of result.tools) tools.set(tool.name, tool);
      cursor = result.nextCursor;
      if (cursor === undefined) break;
    }
    this.tools = tools;
    return tools;
  }

  async call(route: PinnedToolRoute, args: Record<string, unknown>, signal: AbortSignal): Promise<ToolOutcome> {
    const controller = new AbortController();
    const forward = (): void => controller.abort(signal.reason);
    if (signal.aborted) forward();
    else signal.addEventListener('abort', forward, { once: true });
    this.inFlight.add(controller);
    try {
      const tools = await this.listTools(controller.signal);
      const live = tools.get(route.upstreamName);
      if (live === undefined) return failed('tool_missing');
      if (liveSchemaHash(live.inputSchema) !== route.schemaHash) return failed('schema_changed');
      const client = await this.ready(controller.signal);
      const result = (await client.callTool({ name: route.upstreamName, arguments: args }, undefined, {
        signal: controller.signal,
        timeout: this.limits.requestTimeoutMs,
      })) as CallToolResult;
      if (!Array.isArray(result.content)) return failed('protocol_error');
      const projected = projectResult(result);
      if (projected.bytes > this.limits.maxResultBytes) return failed('too_large');
      return { ok: true, content: projected.content, isError: result.isError === true, bytes: projected.bytes };
    } catch (error) {
      // The SDK rewraps abort reasons; our own signal says why we stopped.
      return failed(classifyUpstreamError(controller.signal.aborted ? controller.signal.reason : error));
    } finally {
      this.inFlight.delete(controller);
      signal.removeEventListener('abort', forward);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.failInFlight('closed');
    const client = this.client ?? (await this.connecting?.catch(() => undefined));
    this.client = undefined;
    await client?.close().catch(() => undefined);
    // A transport whose handshake never finished still has a process to end.
    await this.transport?.close().catch(() => undefined);
  }
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
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

/**
 * Opens the upstreams of one run. Definitions are validated up front (WardError invalid_config);
 * servers are started on first use, so a broken one fails its calls, not the whole run.
 */
export async function openUpstreams(defs: Readonly<Record<string, UpstreamDefinition>>, options: UpstreamOptions = {}): Promise<Upstreams> {
  const limits: Limits = { ...DEFAULTS, ...options };
  const connections = new Map(Object.entries(parseUpstreamDefinitions(defs)).map(([name, def]) => [name, new Connection(def, limits)]));
  let closed = false;
  const connection = (name: string): Connection | undefined => connections.get(name);

  return {
    async callTool(route, args, signal) {
      if (closed) return failed('closed');
      const conn = connection(route.upstream);
      if (conn === undefined) return failed('tool_missing');
      return conn.call(route, args, signal);
    },
    async listTools(upstream) {
      const conn = connection(upstream);
      if (conn === undefined) throw new UpstreamFailure('tool_missing');
      try {
        return [...(await conn.listTools(new AbortController().signal)).values()];
      } catch (error) {
        throw new UpstreamFailure(classifyUpstreamError(error));
      }
    },
    stderr(upstream) {
      return connection(upstream)?.log.text() ?? '';
    },
    pid(upstream) {
      return connection(upstream)?.pid;
    },
    async close() {
      closed = true;
      await Promise.allSettled([...connections.values()].map((conn) => conn.close()));
    },
  };
}
