/**
 * The per-run tool broker: a loopback Streamable HTTP MCP server the child reaches at
 * `http://127.0.0.1:PORT/runs/RUN/mcp` with `Authorization: Bearer CAP` (B1). Every request is
 * checked here, before the MCP SDK sees it: peer address, Host, Origin, path, capability, size.
 * It speaks MCP 2025-03-26 to 2025-11-25 on sessions (initialize, then Mcp-Session-Id) and
 * 2026-07-28 statelessly (server/discover, per-request `_meta`), behind the same checks.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { WardError } from '../base/errors.js';
import { readBoundedBody } from '../base/http-body.js';
import { capabilityHash, capabilityMatches, newCapability, startLoopbackServer, type LoopbackServer } from '../base/loopback.js';
import { toolSchemaHash } from '../upstreams/schema-hash.js';
import type { McpSession, ModernEndpoint } from './mcp-session.js';
import { RunState, type CallLimits } from './run-state.js';
import type { SessionTransportOptions } from './session-transport.js';
import type { RunBinding, RunRegistration } from './types.js';

export interface BrokerOptions extends Partial<CallLimits> {
  /** Request bodies above this are answered 413 before parsing (default 4 MiB). */
  readonly maxBodyBytes?: number;
  /** MCP sessions one run may hold at once (the CLI opens one; reconnects open more). */
  readonly maxSessionsPerRun?: number;
  /** Answers ready within this go back as plain JSON, slower ones as SSE (default 1 s). */
  readonly sseAfterMs?: number;
  /** Interval of SSE keep-alive comments during a slow call (default 15 s). */
  readonly keepAliveMs?: number;
}

const DEFAULTS = {
  toolTimeoutMs: 15 * 60_000,
  hardLimitMs: 16 * 60_000,
  maxArgumentBytes: 1024 * 1024,
  maxResultBytes: 1024 * 1024,
  maxConcurrentCalls: 16,
  maxBodyBytes: 4 * 1024 * 1024,
  maxSessionsPerRun: 8,
  sseAfterMs: 1_000,
  // Well inside common HTTP clients' idle timeouts (undici: 300 s).
  keepAliveMs: 15_000,
} as const;

const RUN_ID = /^[A-Za-z0-9_-]{1,128}$/;
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const PATH = /^\/runs\/([A-Za-z0-9_-]{1,128})\/mcp$/;

interface RunEntry {
  readonly state: RunState;
  readonly sessions: Map<string, McpSession>;
  /** POST responses still being written; closing waits for them so drained answers reach the child. */
  readonly posts: Set<ServerResponse>;
  /** The run's stateless 2026-07-28 endpoint, made at its first such request. */
  modern?: ModernEndpoint;
}

/** Bounded: a stuck client cannot hold a run's close open. */
const FLUSH_LIMIT_MS = 2_000;

function responsesFinished(responses: ReadonlySet<ServerResponse>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, FLUSH_LIMIT_MS);
  });
  const all = Promise.all([...responses].map((res) => (res.closed ? undefined : new Promise((resolve) => res.once('close', resolve)))));
  return Promise.race([all.then(() => undefined), limit]).finally(() => clearTimeout(timer));
}

function validateBinding(binding: RunBinding): void {
  if (!RUN_ID.test(binding.runId)) throw new WardError('invalid_config', `run id ${JSON.stringify(binding.runId)} must be 1–128 of A-Z a-z 0-9 _ -`);
  const seen = new Set<string>();
  for (const tool of binding.tools) {
    if (!TOOL_NAME.test(tool.exposedName)) {
      throw new WardError('invalid_config', `tool name ${JSON.stringify(tool.exposedName)} must be 1–64 of A-Z a-z 0-9 _ -`);
    }
    // What the child is shown must be what was pinned (B3).
    if (toolSchemaHash(tool) !== tool.schemaHash) throw new WardError('invalid_config', `tool "${tool.exposedName}": its schema does not match its pinned hash; re-pin the tool`);
    if (seen.has(tool.exposedName)) throw new WardError('invalid_config', `tool name "${tool.exposedName}" is pinned twice`);
    seen.add(tool.exposedName);
  }
}

function reply(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  const body = JSON.stringify({ error: message });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

export class Broker {
  private readonly runs = new Map<string, RunEntry>();
  private readonly limits: CallLimits;
  private readonly maxBodyBytes: number;
  private readonly maxSessionsPerRun: number;
  private readonly streaming: SessionTransportOptions;
  private server!: LoopbackServer;
  private closing = false;
  private mcp: Promise<typeof import('./mcp-session.js')> | undefined;

  private constructor(options: BrokerOptions) {
    this.limits = {
      toolTimeoutMs: options.toolTimeoutMs ?? DEFAULTS.toolTimeoutMs,
      hardLimitMs: options.hardLimitMs ?? DEFAULTS.hardLimitMs,
      maxArgumentBytes: options.maxArgumentBytes ?? DEFAULTS.maxArgumentBytes,
      maxResultBytes: options.maxResultBytes ?? DEFAULTS.maxResultBytes,
      maxConcurrentCalls: options.maxConcurrentCalls ?? DEFAULTS.maxConcurrentCalls,
    };
    this.maxBodyBytes = options.maxBodyBytes ?? DEFAULTS.maxBodyBytes;
    this.maxSessionsPerRun = options.maxSessionsPerRun ?? DEFAULTS.maxSessionsPerRun;
    this.streaming = { sseAfterMs: options.sseAfterMs ?? DEFAULTS.sseAfterMs, keepAliveMs: options.keepAliveMs ?? DEFAULTS.keepAliveMs };
  }

  /** Starts listening on 127.0.0.1 at a random port. */
  static async start(options: BrokerOptions = {}): Promise<Broker> {
    const broker = new Broker(options);
    broker.server = await startLoopbackServer((req, res) => {
      broker.handle(req, res).catch(() => reply(res, 500, 'internal error'));
    });
    return broker;
  }

  get port(): number {
    return this.server.port;
  }

  /**
   * Loads the MCP server code now and answers one request with it on a throwaway endpoint (the
   * SDK's first answer costs most of its time: issue 29). Call it once a child is spawned: both
   * happen while the CLI starts, instead of before the spawn or in the CLI's first request. A
   * request that comes first loads the code itself, without the warm-up beside it.
   */
  prepareSessions(): void {
    if (this.mcp !== undefined) return;
    void this.sessionCode()
      .then((mcp) => mcp.warmUp())
      .catch(() => undefined);
  }

  private sessionCode(): Promise<typeof import('./mcp-session.js')> {
    this.mcp ??= import('./mcp-session.js');
    return this.mcp;
  }

  /** Registers a run and mints its capability (B1). Throws invalid_config for a malformed binding. */
  register(binding: RunBinding): RunRegistration {
    if (this.closing) throw new WardError('internal', 'the broker is shutting down');
    validateBinding(binding);
    if (this.runs.has(binding.runId)) throw new WardError('invalid_config', `run ${binding.runId} is already registered with the broker`);
    const capability = newCapability();
    const entry: RunEntry = { state: new RunState(binding, capabilityHash(capability), this.limits), sessions: new Map(), posts: new Set() };
    this.runs.set(binding.runId, entry);
    let closing: Promise<void> | undefined;
    return {
      url: `http://127.0.0.1:${this.port}/runs/${binding.runId}/mcp`,
      capability,
      inFlight: () => entry.state.inFlight(),
      cancelCalls: () => entry.state.cancelInFlight(),
      close: () => (closing ??= this.closeRun(binding.runId, entry)),
    };
  }

  /** Closes every run (after their calls drain) and stops listening. */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all([...this.runs.entries()].map(([runId, entry]) => this.closeRun(runId, entry)));
    await this.server.close();
  }

  private async closeRun(runId: string, entry: RunEntry): Promise<void> {
    // The capability goes first, so nothing new gets in while calls drain (B1, B7).
    if (this.runs.get(runId) === entry) this.runs.delete(runId);
    entry.state.markClosed();
    await entry.state.drained();
    await responsesFinished(entry.posts);
    const sessions = [...entry.sessions.values()];
    entry.sessions.clear();
    await Promise.allSettled([...sessions.map((session) => session.server.close()), entry.modern?.close()]);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // B1: loopback peers, loopback Host names, and never a browser page.
    const refusal = this.server.refusal(req);
    if (refusal !== null) return reply(res, 403, refusal);

    const match = PATH.exec(new URL(req.url ?? '/', 'http://127.0.0.1').pathname);
    if (match === null) return reply(res, 404, 'not found');
    const entry = this.runs.get(match[1]!);
    if (entry === undefined || entry.state.isClosed) return reply(res, 404, 'no such run');
    if (!this.authorized(req, entry)) return reply(res, 401, 'missing or wrong capability', { 'www-authenticate': 'Bearer realm="ward"' });

    if (req.method === 'POST') {
      entry.posts.add(res);
      res.once('close', () => entry.posts.delete(res));
      const body = await readBoundedBody(req, this.maxBodyBytes);
      if (body === null) return reply(res, 413, `request body exceeds ${this.maxBodyBytes} bytes`);
      let parsed: unknown;
      try {
        parsed = JSON.parse(body.toString('utf8'));
      } catch {
        return reply(res, 400, 'request body is not JSON');
      }
      const sessionId = req.headers['mcp-session-id'];
      const mcp = sessionId === undefined ? await this.sessionCode() : undefined;
      if (mcp !== undefined && !mcp.isLegacyPost(req, parsed)) {
        if (entry.state.isClosed) return reply(res, 404, 'no such run');
        entry.modern ??= mcp.createModernEndpoint(entry.state, this.streaming, this.maxBodyBytes);
        return entry.modern.serve(req, res, parsed);
      }
      if (mcp?.isInitializeRequest(parsed) === true) {
        const session = await this.openSession(entry);
        if (session === null) return entry.state.isClosed ? reply(res, 404, 'no such run') : reply(res, 429, 'too many MCP sessions for this run');
        return session.transport.handlePost(req, res, parsed);
      }
      const session = this.sessionFor(entry, sessionId, res);
      return session?.transport.handlePost(req, res, parsed);
    }
    if (req.method === 'DELETE') return this.sessionFor(entry, req.headers['mcp-session-id'], res)?.transport.handleDelete(res);
    // No GET stream: the broker never sends a message the child did not ask for (the spec's 405).
    return reply(res, 405, 'method not allowed', { allow: 'POST, DELETE' });
  }

  private authorized(req: IncomingMessage, entry: RunEntry): boolean {
    const header = req.headers.authorization;
    return header?.startsWith('Bearer ') === true && capabilityMatches(header.slice('Bearer '.length), entry.state.capabilityHash);
  }

  /** The session a request names, or undefined after answering why there is none. */
  private sessionFor(entry: RunEntry, sessionId: string | string[] | undefined, res: ServerResponse): McpSession | undefined {
    if (typeof sessionId !== 'string') {
      reply(res, 400, 'missing Mcp-Session-Id header');
      return undefined;
    }
    const session = entry.sessions.get(sessionId);
    // 404 tells an MCP client to start a new session.
    if (session === undefined) reply(res, 404, 'unknown MCP session');
    return session;
  }

  private async openSession(entry: RunEntry): Promise<McpSession | null> {
    const { createMcpSession } = await this.sessionCode();
    // After the (first-time) load: the run may have closed, or another initialize opened a session, meanwhile.
    if (entry.state.isClosed || entry.sessions.size >= this.maxSessionsPerRun) return null;
    const sessionId = randomUUID();
    const session = createMcpSession(entry.state, sessionId, this.streaming);
    const { server, transport } = session;
    entry.sessions.set(sessionId, session);
    transport.onclose = () => {
      if (entry.sessions.get(sessionId) === session) entry.sessions.delete(sessionId);
    };
    await server.connect(transport);
    return session;
  }
}
