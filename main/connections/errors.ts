/**
 * Connection failures as the broker's stable call error codes (B5, B6). Whatever an upstream
 * said (error bodies, exception text) stays here: the code and Ward's own one-line detail are
 * all that leaves.
 */
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { OAuthError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { callErrorMessage, type CallErrorCode } from '../upstreams/call-errors.js';
import { WardError } from '../base/errors.js';
import { UpstreamFailure, classifyUpstreamError } from '../upstreams/failure.js';

export type ConnectionErrorCode = CallErrorCode;

export class UpstreamError extends Error {
  constructor(
    readonly code: ConnectionErrorCode,
    /** Ward's own words about what happened, safe to show and to journal. */
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(`${callErrorMessage(code)}${detail === '' ? '' : ` (${detail})`}`, options);
    this.name = 'UpstreamError';
  }
}

export interface ClassifyContext {
  /** Why the session ended, when it did (exit, garbage on stdout, oversize). */
  readonly ended?: UpstreamError | undefined;
  readonly signal?: AbortSignal | undefined;
}

const NOT_SIGNED_IN_CODES = new Set(['not_signed_in', 'signin_rejected', 'signin_timeout', 'signin_state_mismatch', 'credential_missing', 'keychain_unavailable']);

/** Maps anything a connection attempt or call threw to one specific code. */
export function classify(error: unknown, context: ClassifyContext = {}): UpstreamError {
  for (let item: unknown = error, depth = 0; item !== null && typeof item === 'object' && depth < 6; depth++) {
    if (item instanceof UpstreamError) return item;
    // Sign-in trouble during a call means one thing to the caller: sign in again.
    if (item instanceof WardError && NOT_SIGNED_IN_CODES.has(item.code)) return new UpstreamError('not_signed_in', item.message, { cause: error });
    item = (item as { cause?: unknown }).cause;
  }
  if (context.signal?.aborted) {
    const reason = context.signal.reason as { name?: string } | undefined;
    return reason?.name === 'TimeoutError' ? new UpstreamError('timed_out', 'no answer in time', { cause: error }) : new UpstreamError('cancelled', '', { cause: error });
  }
  if (error instanceof UnauthorizedError) return new UpstreamError('not_signed_in', 'sign in again with "ward connections login"', { cause: error });
  // The authorization server refused a refresh or the client (revoked grant, deleted registration): only a new sign-in helps.
  if (error instanceof OAuthError) {
    const oauthCode = /^[a-z_]{1,64}$/.test(error.errorCode) ? error.errorCode : 'oauth_error';
    return new UpstreamError('not_signed_in', `the authorization server answered ${oauthCode}; sign in again with "ward connections login"`, { cause: error });
  }
  if (error instanceof StreamableHTTPError && error.code === 401) {
    return new UpstreamError('unauthorized', 'the server refused the token even after a refresh; sign in again', { cause: error });
  }
  if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed && context.ended !== undefined) return context.ended;
  if (error instanceof UpstreamFailure && error.code === 'closed' && context.ended !== undefined) return context.ended;
  if (error instanceof McpError && (error.code === ErrorCode.InvalidParams || error.code === ErrorCode.MethodNotFound)) {
    return new UpstreamError('refused', `JSON-RPC error ${error.code}`, { cause: error });
  }
  const code = classifyUpstreamError(error);
  if (code === 'closed' && context.ended !== undefined) return context.ended;
  const detail = error instanceof StreamableHTTPError && (error.code ?? 0) > 0 ? `HTTP ${error.code}` : error instanceof McpError ? `JSON-RPC error ${error.code}` : '';
  return new UpstreamError(code, detail, { cause: error });
}
