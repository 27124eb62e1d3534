/**
 * Reads the child's `--output-format stream-json` stdout. Lines are bounded: an oversized or
 * unparseable line becomes a `diagnostic` message, never a crash and never an unbounded buffer.
 * Only the fields Ward relies on are read; everything else in a line is ignored.
 */

/** A tool result can be up to 1 MiB (B5) and JSON escaping can more than double it. */
export const DEFAULT_MAX_LINE_BYTES = 4 * 1024 * 1024;

export interface InitMessage {
  readonly kind: 'init';
  readonly sessionId: string;
  readonly tools: readonly string[];
  readonly mcpServers: readonly { readonly name: string; readonly status: string }[];
  readonly model: string;
  readonly version: string;
}

export interface ResultMessage {
  readonly kind: 'result';
  readonly subtype: string;
  readonly isError: boolean;
  readonly errors: readonly string[];
  readonly text: string | null;
  readonly usage: { readonly inputTokens: number; readonly outputTokens: number; readonly cacheReadTokens: number; readonly cacheCreationTokens: number };
  readonly costUsd: number | null;
  readonly numTurns: number | null;
  readonly durationMs: number | null;
}

export interface ApiRetryMessage {
  readonly kind: 'api_retry';
  readonly attempt: number;
  readonly maxRetries: number;
  readonly delayMs: number;
  /** The provider's HTTP status, or null when it sent none (unreachable, no first byte). */
  readonly status: number | null;
  readonly error: string;
}

export interface PermissionRequest {
  readonly kind: 'permission_request';
  readonly requestId: string;
  readonly toolName: string;
  readonly input: Record<string, unknown>;
  readonly toolUseId: string | null;
  /** The request lacked a tool name or an input object: it is denied. */
  readonly malformed?: true;
}

export type CliMessage =
  | InitMessage
  | { readonly kind: 'assistant_text'; readonly text: string; readonly messageId: string | null }
  /** A piece of assistant text as it streams (`--include-partial-messages`); the `assistant_text` that follows is authoritative. */
  | { readonly kind: 'text_delta'; readonly text: string }
  | { readonly kind: 'tool_use'; readonly toolUseId: string; readonly name: string; readonly input: unknown }
  | { readonly kind: 'tool_result'; readonly toolUseId: string; readonly isError: boolean; readonly bytes: number; readonly text: string }
  | ResultMessage
  /** The CLI will call the model again after a failure (`system/api_retry`). */
  | ApiRetryMessage
  /** The CLI's own text for a failed model call (an assistant line with `error`): not the model's answer. */
  | { readonly kind: 'provider_error'; readonly error: string; readonly text: string }
  | { readonly kind: 'diagnostic'; readonly reason: 'unparseable' | 'oversized' | 'unexpected_shape'; readonly detail: string; readonly bytes: number }
  /** The CLI asks whether a tool call may run (`--permission-prompt-tool stdio`: a `can_use_tool` control request) and waits for the answer. */
  | PermissionRequest
  /** The CLI no longer waits for the answer to request `requestId` (a control cancel request). */
  | { readonly kind: 'permission_cancelled'; readonly requestId: string }
  /** A well-formed line of a type Ward does not act on (control responses, status, ...). */
  | { readonly kind: 'ignored'; readonly type: string };

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const num = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
const count = (value: unknown): number => Math.max(0, Math.trunc(num(value)));

/** A short, printable preview of a bad line for the diagnostic (never the whole line). */
function preview(line: string): string {
  return line.slice(0, 120).replace(/[^\x20-\x7e]/g, '?');
}

function unexpected(type: string, line: string): CliMessage {
  return { kind: 'diagnostic', reason: 'unexpected_shape', detail: `the CLI's ${type} line lacks the fields Ward reads: ${preview(line)}`, bytes: Buffer.byteLength(line) };
}

/** The text of tool_result content (string or content blocks), for size and error messages. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((block) => (isObject(block) && typeof block.text === 'string' ? block.text : '')).join('');
}

/** Parses one complete line (without its newline) into zero or more messages. */
export function parseStreamLine(line: string): CliMessage[] {
  if (line.trim() === '') return [];
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return [{ kind: 'diagnostic', reason: 'unparseable', detail: `not JSON: ${preview(line)}`, bytes: Buffer.byteLength(line) }];
  }
  if (!isObject(value) || typeof value.type !== 'string') return [unexpected('untyped', line)];
  const parse = PARSERS.get(value.type);
  return parse === undefined ? [{ kind: 'ignored', type: value.type }] : parse(value, line);
}

/** `system` lines: the session's init (tools, MCP servers, model) and the CLI's API retries. */
function systemMessages(value: Json, line: string): CliMessage[] {
  if (value.subtype === 'api_retry') return [apiRetry(value)];
  if (value.subtype !== 'init') return [{ kind: 'ignored', type: `system/${String(value.subtype)}` }];
  const tools = Array.isArray(value.tools) ? value.tools.filter((tool): tool is string => typeof tool === 'string') : null;
  const servers = Array.isArray(value.mcp_servers) ? value.mcp_servers : null;
  if (tools === null || servers === null || typeof value.session_id !== 'string') return [unexpected('system/init', line)];
  return [
    {
      kind: 'init',
      sessionId: value.session_id,
      tools,
      mcpServers: servers.filter(isObject).map((server) => ({ name: String(server.name), status: String(server.status) })),
      model: str(value.model) ?? '',
      version: str(value.claude_code_version) ?? '',
    },
  ];
}

/** An `assistant` message: its text and tool uses, or the provider's error in its place. */
function assistantMessages(value: Json, line: string): CliMessage[] {
  const message = value.message;
  if (!isObject(message) || !Array.isArray(message.content)) return [unexpected('assistant', line)];
  if (typeof value.error === 'string') {
    const text = message.content.flatMap((block) => (isObject(block) && block.type === 'text' && typeof block.text === 'string' ? [block.text] : [])).join('\n');
    return [{ kind: 'provider_error', error: value.error, text }];
  }
  const out: CliMessage[] = [];
  for (const block of message.content) {
    if (!isObject(block)) continue;
    if (block.type === 'text' && typeof block.text === 'string') out.push({ kind: 'assistant_text', text: block.text, messageId: str(message.id) });
    else if (block.type === 'tool_use' && typeof block.id === 'string' && typeof block.name === 'string') {
      out.push({ kind: 'tool_use', toolUseId: block.id, name: block.name, input: block.input ?? null });
    }
  }
  return out;
}

/** A `user` message: the tool results it carries back to the model. */
function userMessages(value: Json, line: string): CliMessage[] {
  const message = value.message;
  if (!isObject(message)) return [unexpected('user', line)];
  if (!Array.isArray(message.content)) return [];
  const out: CliMessage[] = [];
  for (const block of message.content) {
    if (!isObject(block) || block.type !== 'tool_result' || typeof block.tool_use_id !== 'string') continue;
    const text = contentText(block.content);
    out.push({ kind: 'tool_result', toolUseId: block.tool_use_id, isError: block.is_error === true, bytes: Buffer.byteLength(text), text });
  }
  return out;
}

/**
 * Messages-API events relayed by `--include-partial-messages`; only top-level text deltas
 * matter (a subagent's stream carries a parent_tool_use_id).
 */
function streamEventMessages(value: Json, line: string): CliMessage[] {
  const event = value.event;
  if (!isObject(event)) return [unexpected('stream_event', line)];
  const delta = event.delta;
  if (event.type !== 'content_block_delta' || !isObject(delta) || delta.type !== 'text_delta' || (value.parent_tool_use_id ?? null) !== null) {
    return [{ kind: 'ignored', type: `stream_event/${String(event.type)}` }];
  }
  return typeof delta.text === 'string' ? [{ kind: 'text_delta', text: delta.text }] : [unexpected('stream_event', line)];
}

/** The `result` line that ends a turn: its outcome, usage, cost and duration. */
function resultMessages(value: Json, line: string): CliMessage[] {
  if (typeof value.subtype !== 'string' || typeof value.is_error !== 'boolean') return [unexpected('result', line)];
  const usage = isObject(value.usage) ? value.usage : {};
  return [
    {
      kind: 'result',
      subtype: value.subtype,
      isError: value.is_error,
      errors: Array.isArray(value.errors) ? value.errors.map((error) => String(error)) : [],
      text: str(value.result),
      usage: {
        inputTokens: num(usage.input_tokens),
        outputTokens: num(usage.output_tokens),
        cacheReadTokens: num(usage.cache_read_input_tokens),
        cacheCreationTokens: num(usage.cache_creation_input_tokens),
      },
      costUsd: typeof value.total_cost_usd === 'number' ? value.total_cost_usd : null,
      numTurns: typeof value.num_turns === 'number' ? value.num_turns : null,
      durationMs: typeof value.duration_ms === 'number' ? value.duration_ms : null,
    },
  ];
}

const PARSERS: ReadonlyMap<string, (value: Json, line: string) => CliMessage[]> = new Map([
  ['system', systemMessages],
  ['assistant', assistantMessages],
  ['user', userMessages],
  ['stream_event', streamEventMessages],
  ['result', resultMessages],
  ['control_request', controlRequests],
  ['control_cancel_request', controlCancels],
]);

/**
 * The CLI's requests to its host. A permission question must be answered (the CLI waits), so a
 * malformed one with a request id still comes through: it is denied, never guessed at.
 */
function controlRequests(value: Json, line: string): CliMessage[] {
  const requestId = str(value.request_id);
  const request = isObject(value.request) ? value.request : null;
  if (requestId === null || request === null) return [unexpected('control_request', line)];
  if (request.subtype !== 'can_use_tool') return [{ kind: 'ignored', type: `control_request/${String(request.subtype)}` }];
  const toolName = str(request.tool_name) ?? '';
  const input = isObject(request.input) ? request.input : null;
  return [{ kind: 'permission_request', requestId, toolName, input: input ?? {}, toolUseId: str(request.tool_use_id), ...(input === null || toolName === '' ? { malformed: true as const } : {}) }];
}

function controlCancels(value: Json, line: string): CliMessage[] {
  const requestId = str(value.request_id);
  return requestId === null ? [unexpected('control_cancel_request', line)] : [{ kind: 'permission_cancelled', requestId }];
}

function apiRetry(value: Json): ApiRetryMessage {
  const status = value.error_status;
  return {
    kind: 'api_retry',
    attempt: count(value.attempt),
    maxRetries: count(value.max_retries),
    delayMs: count(value.retry_delay_ms),
    status: typeof status === 'number' && Number.isInteger(status) ? status : null,
    error: str(value.error) ?? 'unknown',
  };
}

/**
 * Splits a byte stream into lines with a bound per line. Bytes are kept as Buffers until a
 * newline, so a multi-byte character split across chunks decodes correctly.
 */
export class LineSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** True while skipping the rest of an oversized line. */
  private discarding = false;
  private discardedBytes = 0;

  constructor(
    private readonly onLine: (line: string) => void,
    private readonly onOversized: (bytes: number) => void,
    private readonly maxLineBytes: number = DEFAULT_MAX_LINE_BYTES,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(0x0a, start);
      const end = newline === -1 ? chunk.length : newline;
      this.take(chunk.subarray(start, end));
      if (newline === -1) return;
      this.endLine();
      start = newline + 1;
    }
  }

  /** The stream ended: a last line without a newline still counts. */
  end(): void {
    if (this.pendingBytes > 0 || this.discarding) this.endLine();
  }

  private take(part: Buffer): void {
    if (part.length === 0) return;
    if (this.discarding) {
      this.discardedBytes += part.length;
      return;
    }
    if (this.pendingBytes + part.length > this.maxLineBytes) {
      this.discarding = true;
      this.discardedBytes = this.pendingBytes + part.length;
      this.pending = [];
      this.pendingBytes = 0;
      return;
    }
    this.pending.push(part);
    this.pendingBytes += part.length;
  }

  private endLine(): void {
    if (this.discarding) {
      const bytes = this.discardedBytes;
      this.discarding = false;
      this.discardedBytes = 0;
      this.onOversized(bytes);
      return;
    }
    const line = this.pending.length === 1 ? this.pending[0]!.toString('utf8') : Buffer.concat(this.pending, this.pendingBytes).toString('utf8');
    this.pending = [];
    this.pendingBytes = 0;
    this.onLine(line);
  }
}

/** Parser + splitter: bytes in, messages out. */
export class StreamJsonParser {
  private readonly splitter: LineSplitter;

  constructor(onMessage: (message: CliMessage) => void, maxLineBytes: number = DEFAULT_MAX_LINE_BYTES) {
    this.splitter = new LineSplitter(
      (line) => {
        for (const message of parseStreamLine(line)) onMessage(message);
      },
      (bytes) => onMessage({ kind: 'diagnostic', reason: 'oversized', detail: `a stdout line of ${bytes} bytes exceeds the ${maxLineBytes}-byte limit and was skipped`, bytes }),
      maxLineBytes,
    );
  }

  push(chunk: Buffer): void {
    this.splitter.push(chunk);
  }

  end(): void {
    this.splitter.end();
  }
}
