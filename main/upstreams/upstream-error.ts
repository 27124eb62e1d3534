/**
 * An upstream failure as one of the broker's stable call error codes (B5, B6). Apart from the
 * classification in ./errors.ts, which needs the MCP SDK's error classes: a turn that reports a
 * refusal or a server that will not start loads no SDK before its CLI is spawned (issue 19).
 */
import { callErrorMessage, type CallErrorCode } from './call-errors.js';
import type { ToolOutcome } from './types.js';

export class UpstreamError extends Error {
  constructor(
    readonly code: CallErrorCode,
    /** Ward's own words about what happened, safe to show and to journal. */
    readonly detail = '',
    options?: { cause?: unknown },
  ) {
    super(`${callErrorMessage(code)}${detail === '' ? '' : ` (${detail})`}`, options);
    this.name = 'UpstreamError';
  }
}

/** A failed call as the broker takes it. */
export function failedOutcome(error: UpstreamError): ToolOutcome {
  return { ok: false, errorCode: error.code, message: error.message };
}
