/**
 * Upstream failures as the broker's stable call error codes (B5, B6), for inline upstreams and
 * connections alike. The classification reads error types, status codes and errno codes only:
 * whatever an upstream said (error bodies, exception text) stays in `cause`; the code and Ward's
 * own one-line detail are all that leaves.
 */
import { ProtocolError, ProtocolErrorCode, SdkError, SdkErrorCode, SdkHttpError, UnauthorizedError, type JSONRPCErrorResponse, type RequestId } from '@modelcontextprotocol/client';
// A connection's sign-in and refresh run on SDK 1's OAuth client (connections/), whose errors these are.
import { UnauthorizedError as SignInUnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { OAuthError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { WardError } from '../base/errors.js';
import { UpstreamError } from './upstream-error.js';

/** Where a person signs a connection in again, for the desktop and the terminal alike: the text reaches both (and the model). */
const SIGN_IN_WHERE = `sign in on the desktop's Connections page, or with "ward connections login"`;

export { failedOutcome, UpstreamError } from './upstream-error.js';

export interface ClassifyContext {
  /** Why the session ended, when it did (exit, garbage on stdout, oversize): what a "connection closed" really was. */
  readonly ended?: UpstreamError | undefined;
  /** The signal of the attempt: when it fired, its reason says why the attempt stopped. */
  readonly signal?: AbortSignal | undefined;
}

/**
 * Ward's own answer to request `id`, handed to the MCP client in place of one the server's
 * answer cannot be (oversized, or a stream that ended without it), so the one waiting call fails
 * now with `failure` and nothing is re-sent. `failure` rides in `data` as the object itself: a
 * server's JSON can never produce an UpstreamError, so classification can tell the two apart.
 */
export function refusedAnswer(id: RequestId, failure: UpstreamError): JSONRPCErrorResponse {
  return { jsonrpc: '2.0', id, error: { code: ProtocolErrorCode.InternalError, message: failure.message, data: failure } };
}

/** Sign-in trouble during a call means one thing to the caller: sign in again. */
const NOT_SIGNED_IN: ReadonlySet<string> = new Set(['not_signed_in', 'signin_rejected', 'signin_timeout', 'signin_state_mismatch', 'credential_missing', 'keychain_unavailable']);
const UNREACHABLE: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'ENOENT', 'EACCES', 'UND_ERR_CONNECT_TIMEOUT']);
const DROPPED: ReadonlySet<string> = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let item = error; item !== null && typeof item === 'object' && chain.length < 6; item = (item as { cause?: unknown }).cause) chain.push(item);
  return chain;
}

function fromAbortReason(reason: unknown, error: unknown): UpstreamError {
  if (reason instanceof UpstreamError) return reason;
  if ((reason as { name?: unknown } | undefined)?.name === 'TimeoutError') return new UpstreamError('timed_out', 'no answer in time', { cause: error });
  return new UpstreamError('cancelled', '', { cause: error });
}

function fromHttpStatus(error: SdkHttpError): UpstreamError {
  const status = error.status;
  const detail = status > 0 ? `HTTP ${status}` : '';
  if (status === 401) return new UpstreamError('unauthorized', detail, { cause: error });
  if (status === 403) return new UpstreamError('forbidden', detail, { cause: error });
  return new UpstreamError('upstream_error', detail, { cause: error });
}

/** The SDK's own failures (never the server's words): its stable code says what happened. */
function fromSdkError(error: SdkError, closed: () => UpstreamError): UpstreamError {
  if (error.code === SdkErrorCode.ClientHttpUnexpectedContent) return new UpstreamError('protocol_error', 'the server did not answer with MCP', { cause: error });
  if (error instanceof SdkHttpError) return fromHttpStatus(error);
  switch (error.code) {
    case SdkErrorCode.RequestTimeout:
      return new UpstreamError('timed_out', 'no answer in time', { cause: error });
    case SdkErrorCode.ConnectionClosed:
      return closed();
    case SdkErrorCode.InvalidResult:
    case SdkErrorCode.UnsupportedResultType:
      return new UpstreamError('protocol_error', 'the server sent a malformed MCP message', { cause: error });
    case SdkErrorCode.InputRequiredRoundsExceeded:
      return new UpstreamError('upstream_error', 'the server kept asking for input and never answered the call', { cause: error });
    case SdkErrorCode.ListPaginationExceeded:
      return new UpstreamError('too_large', 'the tool list has too many pages', { cause: error });
    case SdkErrorCode.EraNegotiationFailed:
      return new UpstreamError('protocol_error', 'the server answered neither server/discover nor initialize as MCP', { cause: error });
    default:
      return new UpstreamError('upstream_error', '', { cause: error });
  }
}

/** Maps whatever the SDK, fetch, spawn or a sign-in step threw to one specific code. */
export function classifyUpstreamError(error: unknown, context: ClassifyContext = {}): UpstreamError {
  // Our own signal says why we stopped: the SDK rewraps abort reasons.
  if (context.signal?.aborted) return fromAbortReason(context.signal.reason, error);
  const chain = causes(error);
  for (const item of chain) {
    if (item instanceof UpstreamError) return item;
    if (item instanceof WardError && NOT_SIGNED_IN.has(item.code)) return new UpstreamError('not_signed_in', item.message, { cause: error });
  }
  const closed = (): UpstreamError => context.ended ?? new UpstreamError('closed', '', { cause: error });
  if (error instanceof UnauthorizedError || error instanceof SignInUnauthorizedError) return new UpstreamError('not_signed_in', SIGN_IN_WHERE, { cause: error });
  // The authorization server refused a refresh or the client (revoked grant, deleted registration): only a new sign-in helps.
  if (error instanceof OAuthError) {
    const oauthCode = /^[a-z_]{1,64}$/.test(error.errorCode) ? error.errorCode : 'oauth_error';
    return new UpstreamError('not_signed_in', `the authorization server answered ${oauthCode}; ${SIGN_IN_WHERE}`, { cause: error });
  }
  // A failed probe carries why (a refused connection, say) as its cause.
  if (error instanceof SdkError && error.code === SdkErrorCode.EraNegotiationFailed && error.cause !== undefined) return classifyUpstreamError(error.cause, context);
  if (error instanceof SdkError) return fromSdkError(error, closed);
  if (error instanceof ProtocolError) {
    if (error.data instanceof UpstreamError) return error.data;
    return new UpstreamError('upstream_error', `JSON-RPC error ${error.code}`, { cause: error });
  }
  if (error instanceof DOMException && error.name === 'TimeoutError') return new UpstreamError('timed_out', 'no answer in time', { cause: error });
  if (error instanceof DOMException && error.name === 'AbortError') return new UpstreamError('cancelled', '', { cause: error });
  for (const item of chain) {
    const errno = (item as { code?: unknown }).code;
    if (typeof errno !== 'string') continue;
    if (UNREACHABLE.has(errno)) return new UpstreamError('unreachable', errno, { cause: error });
    if (DROPPED.has(errno)) return context.ended ?? new UpstreamError('closed', errno, { cause: error });
    break;
  }
  if (error instanceof SyntaxError || (error instanceof Error && error.name === 'ZodError')) return new UpstreamError('protocol_error', 'the server sent a malformed MCP message', { cause: error });
  if (error instanceof TypeError && error.message === 'fetch failed') return new UpstreamError('unreachable', '', { cause: error });
  return new UpstreamError('upstream_error', '', { cause: error });
}

/** The SDK's word (it is pinned exactly) for a connection that closed while it waited for server/discover. */
export function closedOnProbe(error: unknown): boolean {
  return error instanceof SdkError && error.code === SdkErrorCode.EraNegotiationFailed && error.message.includes('closed during the server/discover probe');
}

/** A stdio server ended during the server/discover probe, before its revision was known. */
export class EndedOnProbe extends Error {
  constructor(readonly failure: UpstreamError) {
    super(failure.message);
  }
}
