/**
 * The fetch Ward's MCP clients use to reach upstream servers, over node:http and node:https.
 *
 * Every tool call the broker forwards is one upstream request, so this leg is pure broker
 * overhead: Node's built-in fetch (undici) took 0.37 ms per loopback request where node:http
 * takes 0.19 ms. undici also keeps a listener on a request's signal until the Request is
 * garbage-collected; the SDK passes its transport's lifetime signal to every request, so a burst
 * of calls warned of a listener leak after 1,500 of them. Here the listener goes when the body ends.
 *
 * It covers what the SDK's Streamable HTTP client sends: string or byte bodies, and no redirect
 * following (the SDK follows POST redirects within the origin itself; any other redirect comes
 * back as it is). Failures look like fetch's: a TypeError "fetch failed" whose cause is the socket
 * or TLS error, or the signal's reason on abort. TLS is verified as for any Node https request.
 * Like fetch, a new connection that is not up (TCP and TLS) within a bound fails as ETIMEDOUT.
 */
import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

function requestBody(body: RequestInit['body']): string | Uint8Array | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  throw new TypeError('an upstream request body must be a string or bytes');
}

function requestHeaders(init: HeadersInit | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  new Headers(init).forEach((value, name) => {
    headers[name] = value;
  });
  return headers;
}

function responseHeaders(raw: http.IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else if (value !== undefined) headers.set(name, value);
  }
  return headers;
}

function connectTimeout(): Error {
  return Object.assign(new Error('the connection was not established in time'), { code: 'ETIMEDOUT' });
}

export function createNodeFetch(connectTimeoutMs: number): FetchLike {
  return (input, init) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(input);
      const client = url.protocol === 'https:' ? https : url.protocol === 'http:' ? http : undefined;
      if (client === undefined) return reject(new TypeError(`fetch failed: ${url.protocol} is not http: or https:`));
      const signal = init?.signal ?? undefined;
      if (signal?.aborted) return reject(signal.reason);
      let body: string | Uint8Array | undefined;
      try {
        body = requestBody(init?.body);
      } catch (error) {
        return reject(error);
      }
      const method = init?.method ?? 'GET';

      let response: http.IncomingMessage | undefined;
      const onAbort = (): void => {
        request.destroy();
        // An answer already handed over errors its body with the reason, as fetch's would.
        response?.destroy(signal!.reason);
        reject(signal!.reason);
      };
      const release = (): void => signal?.removeEventListener('abort', onAbort);
      const request = client.request(url, { method, headers: requestHeaders(init?.headers) }, (res) => {
        response = res;
        const status = res.statusCode ?? 0;
        const responseInit: ResponseInit = { status, statusText: res.statusMessage ?? '', headers: responseHeaders(res.headers) };
        if (NULL_BODY_STATUSES.has(status) || method === 'HEAD') {
          res.resume();
          release();
          resolve(new Response(null, responseInit));
          return;
        }
        res.once('close', release);
        resolve(new Response(Readable.toWeb(res) as ReadableStream<Uint8Array>, responseInit));
      });
      request.once('socket', (socket) => {
        // A kept-alive socket is already up; only a new one can hang in its handshake.
        if (!socket.connecting) return;
        const timer = setTimeout(() => request.destroy(connectTimeout()), connectTimeoutMs);
        socket.once(client === https ? 'secureConnect' : 'connect', () => clearTimeout(timer));
        socket.once('close', () => clearTimeout(timer));
      });
      signal?.addEventListener('abort', onAbort, { once: true });
      request.once('error', (error) => {
        release();
        reject(new TypeError('fetch failed', { cause: error }));
      });
      request.end(body);
    });
}

/** undici's connect bound, so an unreachable host fails as soon as it did with fetch. */
export const nodeFetch = createNodeFetch(10_000);
