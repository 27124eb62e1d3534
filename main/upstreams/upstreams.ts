/**
 * The inline upstream MCP servers of one run (an agent spec's stdio or Streamable HTTP servers),
 * behind the broker's UpstreamCaller contract. Each is an McpSession (session.ts), opened on
 * first use with a bounded wait and opened again after its server ended; a failed open is
 * reported to the call that asked and never cached.
 */
import { UpstreamError, classifyUpstreamError, failedOutcome } from './errors.js';
import { parseUpstreamDefinitions, type UpstreamDefinition } from './definitions.js';
import { DEFAULT_LIMITS, McpSession, abortable, type LiveTool, type SessionLimits, type SessionTarget } from './session.js';
import { BoundedLog, stdioEnvironment } from './stdio-transport.js';
import type { Elicitor } from './elicitation.js';
import type { UpstreamCaller } from './types.js';

/** Overrides of the session limits (session.ts) for a run's inline upstreams. */
export type UpstreamOptions = Partial<SessionLimits>;

export interface Upstreams extends UpstreamCaller {
  /** The upstream's tools as listed now (connects if needed); throws UpstreamError with a stable code. */
  listTools(upstream: string): Promise<LiveTool[]>;
  /** The tail of a stdio upstream's stderr, for diagnostics shown to the person only. */
  stderr(upstream: string): string;
  /** Process id of a running stdio upstream (for process-tree checks). */
  pid(upstream: string): number | undefined;
  /** Closes every session and kills every stdio server's process group. */
  close(): Promise<void>;
}

class InlineUpstream {
  readonly log: BoundedLog;
  private session: McpSession | undefined;
  private opening: Promise<McpSession> | undefined;
  private closed = false;

  constructor(
    private readonly def: UpstreamDefinition,
    private readonly limits: SessionLimits,
    private readonly elicitor: Elicitor | undefined,
  ) {
    this.log = new BoundedLog(limits.maxStderrBytes);
  }

  get pid(): number | undefined {
    return this.session?.pid;
  }

  private target(): SessionTarget {
    if (this.def.type === 'stdio') {
      const { command, args = [], env = {}, cwd } = this.def;
      return { transport: 'stdio', command, args, env: stdioEnvironment(env), ...(cwd === undefined ? {} : { cwd }), stderr: this.log };
    }
    return { transport: 'http', url: new URL(this.def.url), headers: this.def.headers ?? {} };
  }

  /** The live session; one bounded attempt to open it per waiting call. */
  ready(signal: AbortSignal): Promise<McpSession> {
    if (this.closed) return Promise.reject(new UpstreamError('closed', 'the run has ended'));
    if (this.session !== undefined && this.session.ended === undefined) return Promise.resolve(this.session);
    this.opening ??= McpSession.open(this.target(), this.limits, undefined, this.elicitor)
      .catch((error: unknown) => {
        throw this.notStarted(error);
      })
      .then((session) => (this.session = session))
      .finally(() => {
        this.opening = undefined;
      });
    return abortable(this.opening, signal);
  }

  /**
   * Nothing was sent to a stdio server that exited or hung before it answered the handshake: say
   * so, not "may or may not have taken effect" (a missing command stays `unreachable`).
   */
  private notStarted(error: unknown): UpstreamError {
    const failure = classifyUpstreamError(error);
    return this.def.type === 'stdio' && (failure.code === 'closed' || failure.code === 'timed_out') ? new UpstreamError('not_started', failure.detail, { cause: error }) : failure;
  }

  async close(): Promise<void> {
    this.closed = true;
    const session = (await this.opening?.catch(() => undefined)) ?? this.session;
    await session?.close();
  }
}

/**
 * Opens the upstreams of one run. Definitions are validated up front (WardError invalid_config);
 * servers are started on first use, so a broken one fails its calls, not the whole run.
 * `elicit` gives the elicitor for each upstream by name (none: elicitations are declined).
 */
export async function openUpstreams(defs: Readonly<Record<string, UpstreamDefinition>>, options: UpstreamOptions = {}, elicit?: (upstream: string) => Elicitor): Promise<Upstreams> {
  const limits: SessionLimits = { ...DEFAULT_LIMITS, ...options };
  const upstreams = new Map(Object.entries(parseUpstreamDefinitions(defs)).map(([name, def]) => [name, new InlineUpstream(def, limits, elicit?.(name))]));
  let closed = false;

  return {
    async callTool(route, args, signal) {
      if (closed) return failedOutcome(new UpstreamError('closed', 'the run has ended'));
      const upstream = upstreams.get(route.upstream);
      if (upstream === undefined) return failedOutcome(new UpstreamError('tool_missing', `there is no upstream named ${route.upstream}`));
      let session: McpSession;
      try {
        session = await upstream.ready(signal);
      } catch (error) {
        return failedOutcome(classifyUpstreamError(error, { signal }));
      }
      return session.call(route, args, signal);
    },
    async listTools(name) {
      const upstream = upstreams.get(name);
      if (upstream === undefined) throw new UpstreamError('tool_missing', `there is no upstream named ${name}`);
      const signal = new AbortController().signal;
      try {
        return [...(await (await upstream.ready(signal)).tools(signal)).tools];
      } catch (error) {
        throw classifyUpstreamError(error);
      }
    },
    stderr(name) {
      return upstreams.get(name)?.log.text() ?? '';
    },
    pid(name) {
      return upstreams.get(name)?.pid;
    },
    async close() {
      closed = true;
      await Promise.allSettled([...upstreams.values()].map((upstream) => upstream.close()));
    },
  };
}
