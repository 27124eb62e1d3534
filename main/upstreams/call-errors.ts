/**
 * What the child and the journal are told about a failed call (B5): one short, fixed sentence
 * per stable code. Upstream error bodies and exception messages never reach either.
 */
export type CallErrorCode =
  | 'refused'
  | 'not_signed_in'
  | 'unauthorized'
  | 'forbidden'
  | 'insufficient_scope'
  | 'unreachable'
  | 'timed_out'
  | 'upstream_error'
  | 'too_large'
  | 'message_too_large'
  | 'answer_lost'
  | 'protocol_error'
  | 'closed'
  | 'not_started'
  | 'schema_changed'
  | 'tool_missing'
  | 'cancelled'
  | 'internal';

const MESSAGES: Record<CallErrorCode, string> = {
  refused: 'Ward refused the call.',
  not_signed_in: 'The connection for this tool is not signed in; sign in and try again.',
  unauthorized: 'The upstream server rejected the credentials (HTTP 401); sign in to the connection again.',
  forbidden: 'The upstream server refused access to this tool (HTTP 403).',
  insufficient_scope: 'The connection needs more access for this tool: sign in again to grant it.',
  unreachable: 'The upstream server could not be reached.',
  timed_out: 'The tool call timed out. It was not retried and may or may not have taken effect.',
  upstream_error: 'The upstream server answered the call with an error.',
  too_large: 'The tool result was larger than 1 MiB and was discarded.',
  message_too_large: "The upstream server's answer was larger than 8 MiB, the most Ward reads as one message, and was discarded; the connection stays open.",
  answer_lost: 'The upstream server ended its answer stream for the call without a result, and it cannot be resumed. The call was not retried and may or may not have taken effect.',
  protocol_error: 'The upstream server sent a malformed MCP message.',
  closed: 'The connection to the upstream server closed during the call. It was not retried and may or may not have taken effect.',
  not_started: 'The upstream server did not start, so the tool was not called.',
  schema_changed: "The tool's input schema changed upstream since it was pinned; re-pin the tool.",
  tool_missing: 'The upstream server no longer offers this tool; re-pin the agent.',
  cancelled: 'The call was cancelled before the upstream answered.',
  internal: 'Ward could not complete the call.',
};

export function isCallErrorCode(value: string): value is CallErrorCode {
  return Object.hasOwn(MESSAGES, value);
}

/** The fixed text for a code; unknown codes (from a foreign UpstreamCaller) read as internal. */
export function callErrorMessage(code: string): string {
  return isCallErrorCode(code) ? MESSAGES[code] : MESSAGES.internal;
}
