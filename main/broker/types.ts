/**
 * The contract between the run orchestration (runner) and the per-run tool broker.
 * The broker serves the child over loopback Streamable HTTP; everything it needs to decide a
 * call comes from the RunBinding the host registers for that run.
 */

/** A JSON Schema object as MCP carries it. */
export type JsonSchema = { readonly type: 'object'; readonly [key: string]: unknown };

/** One tool pinned in an agent version, routed to the upstream that owns it. */
export interface PinnedToolRoute {
  /** The name the child sees (without the `mcp__ward__` prefix the CLI adds), unique per run. */
  readonly exposedName: string;
  /** Which upstream serves it (a connection or, until connections exist, a stdio server in the agent spec). */
  readonly upstream: string;
  /** The tool's name at the upstream. */
  readonly upstreamName: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  /** SHA-256 of the canonical input schema at pinning time (B3). */
  readonly schemaHash: string;
}

/** What the CLI's `--permission-prompt-tool` call carries. */
export interface ApprovalRequest {
  readonly toolName: string;
  readonly input: Record<string, unknown>;
  readonly toolUseId: string | null;
}

export type ApprovalDecision =
  | { readonly behavior: 'allow'; readonly updatedInput: Record<string, unknown> }
  | { readonly behavior: 'deny'; readonly message: string };

/** Events the broker reports for the journal; never carries credentials. */
export type BrokerEvent =
  | { readonly kind: 'tool_call_started'; readonly callId: string; readonly tool: string; readonly arguments: unknown }
  | {
      readonly kind: 'tool_call_finished';
      readonly callId: string;
      readonly tool: string;
      readonly ok: boolean;
      /** Stable error code when !ok: a CallErrorCode (main/broker/messages.ts); `upstream_error` also marks a tool's own isError result. */
      readonly errorCode?: string;
      /** The fixed text for errorCode (B5): never upstream text. */
      readonly message?: string;
      readonly bytes: number;
      readonly durationMs: number;
    }
  | { readonly kind: 'call_refused'; readonly tool: string; readonly reason: string };

/** MCP content the broker hands back to the child (already capped and projected, B5). */
export type ToolContent = { readonly type: 'text'; readonly text: string } | { readonly type: 'image'; readonly data: string; readonly mimeType: string };

export type ToolOutcome =
  | { readonly ok: true; readonly content: readonly ToolContent[]; readonly isError: boolean; readonly bytes: number }
  | { readonly ok: false; readonly errorCode: string; readonly message: string };

/** Reaches the upstream MCP server that owns a pinned tool (stdio child or Streamable HTTP). */
export interface UpstreamCaller {
  callTool(route: PinnedToolRoute, args: Record<string, unknown>, signal: AbortSignal): Promise<ToolOutcome>;
}

/** Live state the broker re-checks on every call (B4). */
export interface RunBinding {
  readonly runId: string;
  readonly tools: readonly PinnedToolRoute[];
  readonly upstreams: UpstreamCaller;
  /** False once the run is stopping, stopped or finished: new calls are refused. */
  isAcceptingCalls(): boolean;
  /** Permission check for a pinned MCP tool call; a string is the denial reason. */
  authorizeToolCall?(tool: PinnedToolRoute, args: Record<string, unknown>): Promise<true | string>;
  /** Answers the CLI's permission prompt tool (P3); absent means deny everything not pre-granted. */
  approve?(request: ApprovalRequest): Promise<ApprovalDecision>;
  onEvent(event: BrokerEvent): void;
}

export interface RunRegistration {
  /** `http://127.0.0.1:PORT/runs/RUN/mcp`: names the run, holds no secret. */
  readonly url: string;
  /** 32 random bytes, base64url: goes only into the private mcp.json (B1, B2). */
  readonly capability: string;
  /** Removes the capability (in `finally`), then resolves once dispatched calls have drained (B7). */
  close(): Promise<void>;
  /** Number of upstream calls still in flight. */
  inFlight(): number;
}
