/**
 * fetch for upstream MCP servers with a bound on one message: a JSON body, or one SSE event
 * (bytes between blank lines), larger than `limit` errors the stream and reports it, so the SDK
 * never buffers an unbounded response.
 */
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { UpstreamFailure } from './failure.js';
import { nodeFetch } from './node-fetch.js';

const LF = 0x0a;

export function cappedFetch(limit: number, onOversize: () => void): FetchLike {
  return async (url, init) => {
    const response = await nodeFetch(url, init);
    if (response.body === null) return response;
    const length = response.headers.get('content-length');
    const declared = length === null ? Number.NaN : Number(length);
    if (Number.isFinite(declared) && declared > limit) {
      await response.body.cancel().catch(() => undefined);
      onOversize();
      throw new UpstreamFailure('too_large');
    }
    // A declared length within the bound ends the body there; only open-ended bodies (SSE) need counting.
    if (Number.isFinite(declared)) return response;
    let pending = 0;
    let lastByte = -1;
    const bounded = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          // Bytes since the last event boundary ("\n\n"), which may straddle chunks.
          let boundary = -1;
          for (let i = chunk.length - 1; i >= 0; i--) {
            const previous = i === 0 ? lastByte : chunk[i - 1];
            if (chunk[i] === LF && previous === LF) {
              boundary = i;
              break;
            }
          }
          pending = boundary === -1 ? pending + chunk.length : chunk.length - boundary - 1;
          if (chunk.length > 0) lastByte = chunk[chunk.length - 1]!;
          if (pending > limit) {
            onOversize();
            controller.error(new UpstreamFailure('too_large'));
            return;
          }
          controller.enqueue(chunk);
        },
      }),
    );
    return new Response(bounded, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
