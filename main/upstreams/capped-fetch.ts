/**
 * fetch for upstream MCP servers with a bound on one message: a JSON body, or one SSE event,
 * larger than `limit` errors the stream and reports it, so the SDK never buffers an unbounded
 * response.
 */
import type { FetchLike } from '@modelcontextprotocol/client';
import { UpstreamError } from './errors.js';
import { upstreamFetch } from './http-stack.js';

const CR = 0x0d;
const LF = 0x0a;

/**
 * Counts the bytes of each SSE event. An event ends at a blank line, and a line ends at CRLF, LF
 * or CR (the SSE spec allows all three, even mixed in one stream), so CRLF is one line end.
 */
export class SseEventMeter {
  /** Bytes of the event still open, line ends included. */
  private pending = 0;
  private atLineStart = true;
  private afterCR = false;

  /** Feeds a chunk; returns the size of the largest event that ended in it or is still open at its end. */
  feed(chunk: Uint8Array): number {
    let largest = 0;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i]!;
      if (byte === LF && this.afterCR) {
        // The LF of a CRLF: the line ended at the CR; after a blank line it belongs to no event.
        this.afterCR = false;
        if (this.pending > 0) this.pending++;
        continue;
      }
      this.pending++;
      this.afterCR = byte === CR;
      if (byte !== CR && byte !== LF) {
        this.atLineStart = false;
        continue;
      }
      if (this.atLineStart) {
        largest = Math.max(largest, this.pending);
        this.pending = 0;
      }
      this.atLineStart = true;
    }
    return Math.max(largest, this.pending);
  }
}

function tooLarge(limit: number): UpstreamError {
  return new UpstreamError('too_large', `the server sent a message larger than ${limit} bytes`);
}

export function cappedFetch(limit: number, onOversize: (failure: UpstreamError) => void, base: FetchLike = upstreamFetch): FetchLike {
  return async (url, init) => {
    const response = await base(url, init);
    if (response.body === null) return response;
    const length = response.headers.get('content-length');
    const declared = length === null ? Number.NaN : Number(length);
    if (Number.isFinite(declared) && declared > limit) {
      await response.body.cancel().catch(() => undefined);
      const failure = tooLarge(limit);
      onOversize(failure);
      throw failure;
    }
    // A declared length within the bound ends the body there; only open-ended bodies (SSE) need counting.
    if (Number.isFinite(declared)) return response;
    const meter = new SseEventMeter();
    const bounded = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          if (meter.feed(chunk) > limit) {
            const failure = tooLarge(limit);
            onOversize(failure);
            controller.error(failure);
            return;
          }
          controller.enqueue(chunk);
        },
      }),
    );
    return new Response(bounded, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
