/**
 * One live MCP client session to one connection's server, stdio or Streamable HTTP: bounded
 * tool discovery, calls projected to MCP content and capped (B5), failures as specific codes.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolResultSchema, ToolListChangedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { projectResult } from '../upstreams/upstreams.js';
import type { JsonSchema, ToolOutcome } from '../upstreams/types.js';
import { unusableToolName } from './config.js';
import { UpstreamFailure } from '../upstreams/failure.js';
import { schemaHash } from '../upstreams/schema-hash.js';
import { type BoundedLog, GroupStdioTransport } from '../upstreams/stdio-transport.js';
import { UpstreamError, classify } from './errors.js';
import { connectionFetch } from './http-fetch.js';
import type { ConnectionOAuthProvider } from './oauth.js';
import type { LiveTool } from './registry.js';

export interface ConnectionLimits {
  readonly connectTimeoutMs: number;
  readonly listTimeoutMs: number;
  /** Upstream call timeout (B6: 15 min); the broker's own limits apply on top. */
  readonly callTimeoutMs: number;
  readonly maxTools: number;
  readonly maxListPages: number;
  readonly maxSchemaBytes: number;
  readonly maxDescriptionChars: number;
  /** B5: projected results above this are discarded. */
  readonly maxResultBytes: number;
  /** One transport message (stdio line, HTTP body) above this ends the exchange as too_large. */
  readonly maxMessageBytes: number;
  readonly maxStderrBytes: number;
}

export const DEFAULT_LIMITS: ConnectionLimits = {
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
};

export interface ToolListing {
  readonly tools: readonly LiveTool[];
  /** Tools the server offers that Ward cannot offer on (bad name, oversized schema), with why. */
  readonly unusable: readonly { readonly name: string; readonly reason: string }[];
}

export interface StdioLaunch {
  readonly command: string;
  readonly args: readonly string[];
  /** The child's complete environment, built from an allowlist (R2). */
  readonly env: Readonly<Record<string, string>>;
}

export type UpstreamTarget =
  | { readonly transport: 'stdio'; readonly name: string; readonly launch: StdioLaunch; readonly stderr: BoundedLog }
  | { readonly transport: 'http'; readonly name: string; readonly url: URL; readonly auth: ConnectionOAuthProvider };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export class UpstreamConnection {
  private liveTools = new Map<string, LiveTool>();
  private closedByUs = false;
  private ended: UpstreamError | undefined;
  /** The first failure the transport reported (garbage on stdout, an oversized message). */
  private fault: UpstreamError | undefined;
  private readonly endListeners: Array<(failure: UpstreamError) => void> = [];

  private constructor(
    readonly name: string,
    private readonly client: Client,
    private readonly transport: Transport,
    private readonly limits: ConnectionLimits,
  ) {}

  /** Connects and initializes within the connect timeout; the process or session is closed on any failure. */
  static async open(target: UpstreamTarget, limits: ConnectionLimits = DEFAULT_LIMITS): Promise<UpstreamConnection> {
    const transport: Transport =
      target.transport === 'stdio'
        ? new GroupStdioTransport({ ...target.launch, maxMessageBytes: limits.maxMessageBytes, stderr: target.stderr, killGraceMs: 2_000 })
        : new StreamableHTTPClientTransport(target.url, {
            // Ward's fetch handles the token and the one refresh-and-retry (under a lock), not the SDK transport.
            fetch: connectionFetch({ serverUrl: target.url, provider: target.auth, lockFile: target.auth.lockFile, maxMessageBytes: limits.maxMessageBytes }),
            reconnectionOptions: { maxReconnectionDelay: 30_000, initialReconnectionDelay: 1_000, reconnectionDelayGrowFactor: 2, maxRetries: 0 },
          });
    const client = new Client({ name: 'ward', version: '0.1.0' }, { capabilities: {} });
    const connection = new UpstreamConnection(target.name, client, transport, limits);
    client.onclose = () => connection.onTransportClosed();
    client.onerror = (error) => connection.onTransportError(error);
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new DOMException('connect timeout', 'TimeoutError')), limits.connectTimeoutMs);
    try {
      await client.connect(transport, { signal: controller.signal, timeout: limits.connectTimeoutMs });
    } catch (error) {
      const failure = classify(error, { ended: connection.fault ?? connection.ended, signal: controller.signal });
      await connection.close();
      throw failure;
    } finally {
      clearTimeout(timer);
    }
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      connection.listTools().catch(() => undefined);
    });
    return connection;
  }

  get pid(): number | undefined {
    return this.transport instanceof GroupStdioTransport ? this.transport.pid : undefined;
  }

  /** Called once when the session ends without Ward closing it (crash, garbage, oversize). */
  onEnd(listener: (failure: UpstreamError) => void): void {
    this.endListeners.push(listener);
  }

  /**
   * stdout carries protocol only: a line that is not JSON-RPC, or one too large to frame,
   * means the server cannot be trusted to answer correctly, so the session ends.
   */
  private onTransportError(error: Error): void {
    if (!(error instanceof UpstreamFailure) || this.fault !== undefined) return;
    if (error.code === 'protocol_error') this.fault = new UpstreamError('protocol_error', 'the server wrote something other than JSON-RPC on stdout');
    else if (error.code === 'too_large') this.fault = new UpstreamError('too_large', `the server sent a message larger than ${this.limits.maxMessageBytes} bytes`);
    else return;
    void this.client.close().catch(() => undefined);
  }

  private onTransportClosed(): void {
    if (this.ended !== undefined) return;
    this.ended = this.fault ?? new UpstreamError('closed', this.closedByUs ? 'the connection was closed' : 'the server exited or closed the connection');
    if (this.closedByUs) return;
    for (const listener of this.endListeners) listener(this.ended);
  }

  /** The tool listed now by that name, as last listed. */
  liveTool(name: string): LiveTool | undefined {
    return this.liveTools.get(name);
  }

  /** Lists every tool (following pages, bounded), validating names and schema sizes. */
  async listTools(): Promise<ToolListing> {
    const tools: LiveTool[] = [];
    const unusable: { name: string; reason: string }[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new DOMException('list timeout', 'TimeoutError')), this.limits.listTimeoutMs);
    try {
      for (let page = 0; ; page++) {
        if (page >= this.limits.maxListPages) throw new UpstreamError('too_large', `the tool list has more than ${this.limits.maxListPages} pages`);
        const result = await this.client.listTools(cursor === undefined ? {} : { cursor }, { signal: controller.signal, timeout: this.limits.listTimeoutMs });
        for (const tool of result.tools) {
          if (seen.size >= this.limits.maxTools) throw new UpstreamError('too_large', `the server offers more than ${this.limits.maxTools} tools`);
          if (seen.has(tool.name)) throw new UpstreamError('protocol_error', `the server lists the tool ${JSON.stringify(tool.name.slice(0, 64))} twice`);
          seen.add(tool.name);
          const badName = unusableToolName(this.name, tool.name);
          if (badName !== undefined) {
            unusable.push({ name: tool.name.slice(0, 128), reason: badName });
            continue;
          }
          const schemaBytes = Buffer.byteLength(JSON.stringify(tool.inputSchema), 'utf8');
          if (schemaBytes > this.limits.maxSchemaBytes) {
            unusable.push({ name: tool.name, reason: `its input schema is ${schemaBytes} bytes, more than ${this.limits.maxSchemaBytes}` });
            continue;
          }
          const inputSchema = tool.inputSchema as JsonSchema;
          tools.push({ name: tool.name, description: (tool.description ?? '').slice(0, this.limits.maxDescriptionChars), inputSchema, schemaHash: schemaHash(inputSchema) });
        }
        if (this.fault !== undefined) throw this.fault;
        cursor = result.nextCursor;
        if (cursor === undefined) break;
      }
    } catch (error) {
      throw classify(error, { ended: this.fault ?? this.ended, signal: controller.signal });
    } finally {
      clearTimeout(timer);
    }
    this.liveTools = new Map(tools.map((tool) => [tool.name, tool]));
    return { tools, unusable };
  }

  /** One attempt, never retried here (B6); the result is projected and capped (B5). */
  async callTool(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<ToolOutcome> {
    if (this.ended !== undefined) return { ok: false, errorCode: this.ended.code, message: this.ended.message };
    let result: CallToolResult;
    try {
      result = (await this.client.callTool({ name, arguments: args }, CallToolResultSchema, { signal, timeout: this.limits.callTimeoutMs })) as CallToolResult;
    } catch (error) {
      const failure = classify(error, { ended: this.fault ?? this.ended, signal });
      return { ok: false, errorCode: failure.code, message: failure.message };
    }
    // An answer that arrived after garbage on the same stream is not trusted.
    if (this.fault !== undefined) return { ok: false, errorCode: this.fault.code, message: this.fault.message };
    if (!isPlainObject(result)) return { ok: false, errorCode: 'protocol_error', message: 'the server sent a malformed result' };
    const projected = projectResult(result);
    if (projected.bytes > this.limits.maxResultBytes) {
      return { ok: false, errorCode: 'too_large', message: `the result was ${projected.bytes} bytes, more than ${this.limits.maxResultBytes}` };
    }
    return { ok: true, content: projected.content, isError: result.isError === true, bytes: projected.bytes };
  }

  /** Ends the session; a stdio server is stopped (its whole process group). */
  async close(): Promise<void> {
    this.closedByUs = true;
    try {
      if (this.transport instanceof StreamableHTTPClientTransport && this.transport.sessionId !== undefined && this.ended === undefined) {
        await Promise.race([this.transport.terminateSession().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
      }
      await this.client.close();
    } catch {
      // best effort: the stdio transport kills the process group regardless
    }
    this.ended ??= new UpstreamError('closed', 'the connection was closed');
  }
}
