/**
 * One registered run inside the broker: the pinned tool list and the call pipeline (B3–B7).
 * Shared by every MCP session the child opens for this run. (The CLI's permission questions do
 * not come here: they are control requests on its stdout, ../app/runs/cli-session.ts.)
 */
import { randomUUID } from 'node:crypto';
import type { CallToolResult, Tool } from '@modelcontextprotocol/server';
import type { BrokerEvent, RunBinding } from './types.js';
import { contentBytes, resourceLinkOf, structuredBytes, structuredOf } from '../upstreams/projection.js';
import type { PinnedToolRoute, StructuredContent, ToolContent, ToolOutcome } from '../upstreams/types.js';
import { callErrorMessage, type CallErrorCode } from '../upstreams/call-errors.js';
import { redactJson } from '../base/secret-redaction.js';

/**
 * Where the pinned CLI names the tool_use block a tools/call answers: the request's
 * `params._meta` holds `{"claudecode/toolUseId": "toolu_…"}` (captured from 2.1.328 on the
 * broker: test/broker/data/cli-2.1.328-tools-call.json). The host joins the call's outcome to
 * the CLI's tool_result by it.
 */
export const CLI_TOOL_USE_ID_META = 'claudecode/toolUseId';
const TOOL_USE_ID = /^[A-Za-z0-9_-]{1,128}$/;

export interface CallLimits {
  /** Upstream calls are aborted after this long (B6: 15 min). */
  readonly toolTimeoutMs: number;
  /** The broker answers and stops waiting after this long, whatever the upstream does (B6: 16 min). */
  readonly hardLimitMs: number;
  /** Serialized `arguments` bigger than this are refused. */
  readonly maxArgumentBytes: number;
  /** Projected results bigger than this are discarded as too_large (B5: 1 MiB). */
  readonly maxResultBytes: number;
  /** Upstream calls one run may have in flight at once; more are refused, not queued. */
  readonly maxConcurrentCalls: number;
}

/** Names the model supplies are echoed back bounded and quoted, never raw. */
function quoteName(name: string): string {
  return JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}…` : name);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The CLI's tool_use id from a tools/call request's `_meta`, or null when absent or malformed. */
export function toolUseIdOf(meta: unknown): string | null {
  if (!isPlainObject(meta)) return null;
  const id = meta[CLI_TOOL_USE_ID_META];
  return typeof id === 'string' && TOOL_USE_ID.test(id) ? id : null;
}

function errorResult(code: CallErrorCode | string, detail?: string): CallToolResult {
  const text = detail === undefined ? callErrorMessage(code) : `${callErrorMessage(code)} ${detail}`;
  return { isError: true, content: [{ type: 'text', text: `${text} [${code}]` }] };
}

/** Re-projects whatever an UpstreamCaller returned to text, images, resource links and a structured object, and measures it (B5). */
function project(outcome: Extract<ToolOutcome, { ok: true }>): { content: ToolContent[]; structuredContent?: StructuredContent; bytes: number } | null {
  const projected: ToolContent[] = [];
  for (const item of outcome.content) {
    if (item.type === 'text' && typeof item.text === 'string') projected.push({ type: 'text', text: item.text });
    else if (item.type === 'image' && typeof item.data === 'string' && typeof item.mimeType === 'string') projected.push({ type: 'image', data: item.data, mimeType: item.mimeType });
    else if (item.type === 'resource_link' && resourceLinkOf(item) !== null) projected.push(resourceLinkOf(item)!);
    else return null;
  }
  const structured = outcome.structuredContent === undefined ? undefined : structuredOf(outcome.structuredContent);
  if (structured === null) return null;
  const bytes = projected.reduce((sum, item) => sum + contentBytes(item), structuredBytes(structured));
  return { content: projected, ...(structured === undefined ? {} : { structuredContent: structured }), bytes };
}

export class RunState {
  private readonly routes: Map<string, PinnedToolRoute>;
  private readonly calls = new Set<Promise<unknown>>();
  /** Each dispatched call's abort, so a stop can cancel the upstream calls itself (R6). */
  private readonly aborts = new Set<AbortController>();
  private readonly cancelledByStop = new WeakSet<AbortController>();
  private closed = false;

  constructor(
    readonly binding: RunBinding,
    /** SHA-256 of the capability; the plaintext is not kept (B1). */
    readonly capabilityHash: Buffer,
    private readonly limits: CallLimits,
  ) {
    this.routes = new Map(binding.tools.map((route) => [route.exposedName, route]));
  }

  get isClosed(): boolean {
    return this.closed;
  }

  inFlight(): number {
    return this.calls.size;
  }

  /** Stops accepting calls. */
  markClosed(): void {
    this.closed = true;
  }

  /**
   * R6: the run is stopping. Every upstream call in flight is cancelled by Ward itself (the SDK
   * sends the server `notifications/cancelled` and stops waiting), whether or not the CLI got to
   * cancel it first, so the drain that follows ends at once instead of waiting out the call.
   */
  cancelInFlight(): void {
    for (const controller of this.aborts) {
      this.cancelledByStop.add(controller);
      controller.abort(new DOMException('the run was stopped', 'AbortError'));
    }
  }

  /** Resolves once every dispatched upstream call has settled or hit the hard limit (B7). */
  async drained(): Promise<void> {
    while (this.calls.size > 0) await Promise.allSettled([...this.calls]);
  }

  listTools(): Tool[] {
    return [...this.routes.values()].map((route) => ({
      name: route.exposedName,
      description: route.description,
      inputSchema: route.inputSchema,
      ...(route.outputSchema === undefined ? {} : { outputSchema: route.outputSchema }),
    }));
  }

  private accepting(): boolean {
    return !this.closed && this.binding.isAcceptingCalls();
  }

  /** After the fact: a failing journal must not keep an answer from the child. */
  private report(event: BrokerEvent): void {
    try {
      this.binding.onEvent(event);
    } catch {
      // The host's own error path owns this failure.
    }
  }

  private refuse(tool: string, reason: string): CallToolResult {
    this.report({ kind: 'call_refused', tool, reason });
    return errorResult('refused', reason);
  }

  async callTool(name: string, rawArgs: unknown, childSignal: AbortSignal, toolUseId: string | null): Promise<CallToolResult> {
    const tool = name.slice(0, 128);
    if (!this.accepting()) return this.refuse(tool, 'The run is not accepting tool calls.');
    const route = this.routes.get(name);
    if (route === undefined) return this.refuse(tool, `Unknown tool ${quoteName(name)}: it is not pinned in this agent version.`);
    const args = rawArgs ?? {};
    if (!isPlainObject(args)) return this.refuse(tool, 'Tool arguments must be a JSON object.');
    if (Buffer.byteLength(JSON.stringify(args), 'utf8') > this.limits.maxArgumentBytes) {
      return this.refuse(tool, `Tool arguments exceed ${this.limits.maxArgumentBytes} bytes.`);
    }
    if (this.binding.authorizeToolCall !== undefined) {
      let verdict: true | string;
      try {
        verdict = await this.binding.authorizeToolCall(route, args);
      } catch {
        verdict = 'The permission check failed.';
      }
      if (verdict !== true) return this.refuse(tool, verdict);
      // The check awaited: the run may have ended meanwhile (B4).
      if (!this.accepting()) return this.refuse(tool, 'The run is not accepting tool calls.');
    }
    if (this.calls.size >= this.limits.maxConcurrentCalls) {
      return this.refuse(tool, `${this.limits.maxConcurrentCalls} tool calls are already in flight; wait for one to finish.`);
    }
    return this.dispatch(route, args, childSignal, toolUseId);
  }

  private async dispatch(route: PinnedToolRoute, args: Record<string, unknown>, childSignal: AbortSignal, toolUseId: string | null): Promise<CallToolResult> {
    const callId = randomUUID();
    const tool = route.exposedName;
    const startedAt = performance.now();
    try {
      this.binding.onEvent({ kind: 'tool_call_started', callId, toolUseId, tool, arguments: args });
    } catch {
      // A call that could not be recorded is not made.
      return errorResult('internal');
    }

    const controller = new AbortController();
    let timedOut = false;
    const toolTimer = setTimeout(() => {
      timedOut = true;
      controller.abort(new DOMException('tool timeout', 'TimeoutError'));
    }, this.limits.toolTimeoutMs);
    const onChildAbort = (): void => controller.abort(new DOMException('cancelled by the child', 'AbortError'));
    childSignal.addEventListener('abort', onChildAbort, { once: true });
    this.aborts.add(controller);
    let hardTimer: NodeJS.Timeout | undefined;
    const hardLimit = new Promise<ToolOutcome>((resolve) => {
      hardTimer = setTimeout(() => {
        timedOut = true;
        controller.abort(new DOMException('hard limit', 'TimeoutError'));
        resolve({ ok: false, errorCode: 'timed_out', message: callErrorMessage('timed_out') });
      }, this.limits.hardLimitMs);
    });
    // Exactly one upstream attempt, never retried (B6).
    const upstream = Promise.resolve()
      .then(() => this.binding.upstreams.callTool(route, args, controller.signal))
      .catch((): ToolOutcome => ({ ok: false, errorCode: 'internal', message: callErrorMessage('internal') }));
    const settled = Promise.race([upstream, hardLimit]);
    this.calls.add(settled);
    let outcome: ToolOutcome;
    try {
      outcome = await settled;
    } finally {
      this.calls.delete(settled);
      this.aborts.delete(controller);
      clearTimeout(toolTimer);
      clearTimeout(hardTimer);
      childSignal.removeEventListener('abort', onChildAbort);
    }

    const durationMs = performance.now() - startedAt;
    const fail = (code: string, bytes = 0): CallToolResult => {
      this.report({ kind: 'tool_call_finished', callId, toolUseId, tool, ok: false, errorCode: code, message: callErrorMessage(code), bytes, durationMs });
      return errorResult(code);
    };
    if (!outcome.ok) {
      if (timedOut) return fail('timed_out');
      if (childSignal.aborted || this.cancelledByStop.has(controller)) return fail('cancelled');
      return fail(outcome.errorCode);
    }
    const projected = project(outcome);
    if (projected === null) return fail('protocol_error');
    if (projected.bytes > this.limits.maxResultBytes) return fail('too_large', projected.bytes);
    // A tool-level error (isError) is the tool's own output, projected and capped like any other.
    this.report({
      kind: 'tool_call_finished',
      callId,
      toolUseId,
      tool,
      ok: !outcome.isError,
      ...(outcome.isError ? { errorCode: 'upstream_error', message: callErrorMessage('upstream_error') } : {}),
      bytes: projected.bytes,
      durationMs,
    });
    // What a server echoes of the secrets Ward gave it (a token, a secret variable) reaches neither the model nor the CLI's transcript.
    const result: CallToolResult = { isError: outcome.isError, content: projected.content, ...(projected.structuredContent === undefined ? {} : { structuredContent: projected.structuredContent }) };
    return redactJson(result, this.binding.secrets?.() ?? []);
  }
}
