/**
 * Upstream failures as stable codes (B5, B6). The classification reads error types and status
 * codes only; messages of upstream errors are never carried on.
 */
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { callErrorMessage, type CallErrorCode } from './call-errors.js';

export type UpstreamErrorCode = Extract<
  CallErrorCode,
  'unauthorized' | 'forbidden' | 'unreachable' | 'timed_out' | 'upstream_error' | 'too_large' | 'protocol_error' | 'closed' | 'schema_changed' | 'tool_missing' | 'cancelled'
>;

/** A failure we detected ourselves; also used as an abort reason so the code survives the SDK. */
export class UpstreamFailure extends Error {
  constructor(readonly code: UpstreamErrorCode) {
    super(callErrorMessage(code));
    this.name = 'UpstreamFailure';
  }
}

const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'ENOENT', 'EACCES', 'UND_ERR_CONNECT_TIMEOUT']);
const DROPPED = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

function errnoCode(error: unknown): string | undefined {
  for (let current: unknown = error, depth = 0; current !== null && typeof current === 'object' && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Maps whatever the SDK, fetch or spawn threw to a stable code. */
export function classifyUpstreamError(error: unknown): UpstreamErrorCode {
  if (error instanceof UpstreamFailure) return error.code;
  if (error instanceof UnauthorizedError) return 'unauthorized';
  if (error instanceof StreamableHTTPError) {
    if (error.code === 401) return 'unauthorized';
    if (error.code === 403) return 'forbidden';
    if (error.code === -1) return 'protocol_error';
    return 'upstream_error';
  }
  if (error instanceof McpError) {
    if (error.code === ErrorCode.RequestTimeout) return 'timed_out';
    if (error.code === ErrorCode.ConnectionClosed) return 'closed';
    return 'upstream_error';
  }
  if (error instanceof DOMException && error.name === 'TimeoutError') return 'timed_out';
  if (error instanceof DOMException && error.name === 'AbortError') return 'cancelled';
  const code = errnoCode(error);
  if (code !== undefined && UNREACHABLE.has(code)) return 'unreachable';
  if (code !== undefined && DROPPED.has(code)) return 'closed';
  if (error instanceof SyntaxError || (error instanceof Error && error.name === 'ZodError')) return 'protocol_error';
  if (error instanceof TypeError && error.message === 'fetch failed') return 'unreachable';
  return 'upstream_error';
}
