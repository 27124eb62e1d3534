/**
 * The contract between the run orchestration (runner) and the per-run tool broker.
 * The broker serves the child over loopback Streamable HTTP; everything it needs to decide a
 * call comes from the RunBinding the host registers for that run.
 */

import type { PinnedToolRoute, UpstreamCaller } from '../upstreams/types.js';

/** What the CLI's `--permission-prompt-tool` call carries. */
/**
 * Events the broker reports for the journal; never carries credentials. `toolUseId` is the CLI's
 * id of the tool_use block the call answers (see CLI_TOOL_USE_ID_META), null when the call came
 * without one.
 */
export type BrokerEvent =
  | { readonly kind: 'tool_call_started'; readonly callId: string; readonly toolUseId: string | null; readonly tool: string; readonly arguments: unknown }
  | {
      readonly kind: 'tool_call_finished';
      readonly callId: string;
      readonly toolUseId: string | null;
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

/** Live state the broker re-checks on every call (B4). */
export interface RunBinding {
  readonly runId: string;
  readonly tools: readonly PinnedToolRoute[];
  readonly upstreams: UpstreamCaller;
  /** False once the run is stopping, stopped or finished: new calls are refused. */
  isAcceptingCalls(): boolean;
  /** Permission check for a pinned MCP tool call; a string is the denial reason. */
  authorizeToolCall?(tool: PinnedToolRoute, args: Record<string, unknown>): Promise<true | string>;
  onEvent(event: BrokerEvent): void;
  /**
   * Secrets Ward holds (what the connections read, the run's capabilities) that an upstream's
   * result must not carry to the child (C3). Read at each result: the list grows as servers start.
   */
  secrets?(): readonly string[];
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
  /** The run is stopping: cancels every upstream call in flight now (R6); close() still drains. */
  cancelCalls(): void;
}
