/**
 * fetch for upstream MCP servers with a bound on one message: a JSON body, or one SSE event
 * (bytes between blank lines), larger than `limit` errors the stream and reports it, so the SDK
 * never buffers an unbounded response.
 */
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { UpstreamFailure } from './failure.js';

const LF = 0x0a;

/**
 * The SDK hands every request the transport's lifetime signal. undici keeps a listener on a
 * request's signal until the Request is garbage-collected and scans all of them on each new
 * request, so a busy connection pays for its history and warns of a listener leak after 1,500
 * calls. Each request gets its own signal instead, linked to the lifetime one only until its
 * body has been read.
 */
function requestSignal(lifetime: AbortSignal | null | undefined): { signal: AbortSignal; release: () => void } {
  const controller = new AbortController();
  if (lifetime === undefined || lifetime === null) return { signal: controller.signal, release: () => undefined };
  const forward = (): void => controller.abort(lifetime.reason);
  if (lifetime.aborted) forward();
  else lifetime.addEventListener('abort', forward, { once: true });
  return { signal: controller.signal, release: () => lifetime.removeEventListener('abort', forward) };
}

export function cappedFetch(limit: number, onOversize: () => void): FetchLike {
  return async (url, init) => {
    const { signal, release } = requestSignal(init?.signal);
    try {
      const response = await fetch(url, { ...init, signal });
      const bounded = await bound(response, limit, onOversize, release);
      return bounded;
    } catch (error) {
      release();
      throw error;
    }
  };
}

/** Reads a declared-length body whole (within the bound), or counts an open-ended one (SSE) event by event. */
async function bound(response: Response, limit: number, onOversize: () => void, release: () => void): Promise<Response> {
  const init = { status: response.status, statusText: response.statusText, headers: response.headers };
  if (response.body === null) {
    release();
    return response;
  }
  const length = response.headers.get('content-length');
  const declared = length === null ? Number.NaN : Number(length);
  if (Number.isFinite(declared) && declared > limit) {
    await response.body.cancel().catch(() => undefined);
    onOversize();
    throw new UpstreamFailure('too_large');
  }
  if (Number.isFinite(declared)) {
    // fetch itself enforces a declared length; reading it here lets the signal go at once.
    const body = await response.arrayBuffer();
    release();
    return new Response(body, init);
  }
  let pending = 0;
  let lastByte = -1;
  const counted = response.body.pipeThrough(
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
          release();
          controller.error(new UpstreamFailure('too_large'));
          return;
        }
        controller.enqueue(chunk);
      },
      flush: release,
    }),
  );
  return new Response(counted, init);
}
