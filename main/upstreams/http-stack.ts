/**
 * Which HTTP stack carries a request to an upstream MCP server: decided here, nowhere else.
 *
 * - Plain http to a loopback host goes over node:http (node-fetch.ts). That leg is pure broker
 *   overhead for every tool call to a local server, and node:http takes half of fetch's time.
 * - Everything else (https anywhere, and http to another host under the explicit override) goes
 *   through Node's global fetch (undici). That is the stack openid-client (OIDC sign-in) and the
 *   MCP SDK's OAuth (a connection's discovery, registration, token and refresh requests) already
 *   use, so a remote server's MCP traffic and its OAuth traffic share one client: one TLS
 *   configuration (the system's CAs plus NODE_EXTRA_CA_CERTS), one connect bound (undici's
 *   10 s), one way to reach a proxy later, and no TLS client of Ward's own to keep right. The
 *   0.2 ms fetch adds per request does not show next to a network round trip.
 */
import type { FetchLike } from '@modelcontextprotocol/client';
import { isLoopbackHost } from '../base/url-policy.js';
import { nodeFetch } from './node-fetch.js';

export function usesNodeHttp(url: URL): boolean {
  return url.protocol === 'http:' && isLoopbackHost(url.hostname);
}

/**
 * Global fetch, holding the caller's signal only while the request and its body are open: undici
 * would keep its listener on the transport's lifetime signal until each Request is collected
 * (see node-fetch.ts), so it gets a signal of its own per request.
 */
const remoteFetch: FetchLike = async (input, init) => {
  const outer = init?.signal ?? undefined;
  if (outer === undefined) return fetch(input, init);
  if (outer.aborted) throw outer.reason;
  const inner = new AbortController();
  const forward = (): void => inner.abort(outer.reason);
  outer.addEventListener('abort', forward, { once: true });
  const release = (): void => outer.removeEventListener('abort', forward);
  let response: Response;
  try {
    response = await fetch(input, { ...init, signal: inner.signal });
  } catch (error) {
    release();
    throw error;
  }
  if (response.body === null) {
    release();
    return response;
  }
  const reader = response.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await reader.read();
        if (next.done) {
          release();
          controller.close();
        } else {
          controller.enqueue(next.value);
        }
      } catch (error) {
        release();
        controller.error(error);
      }
    },
    cancel(reason) {
      release();
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
};

/** The fetch for one upstream request, by its URL. */
export const upstreamFetch: FetchLike = (input, init) => (usesNodeHttp(new URL(input)) ? nodeFetch(input, init) : remoteFetch(input, init));
