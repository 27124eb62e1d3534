/**
 * The fetch for upstream MCP servers on this machine (plain http to a loopback host), over
 * node:http. main/upstreams/http-stack.ts decides which requests take it; all others go through
 * Node's global fetch.
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
 * error, or the signal's reason on abort. A loopback connection is up or refused at once, so
 * there is no connect bound of its own: the caller's signal bounds the request.
 */
import http from 'node:http';
import { Readable } from 'node:stream';
import type { FetchLike } from '@modelcontextprotocol/client';

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

export const nodeFetch: FetchLike = (input, init) =>
  new Promise<Response>((resolve, reject) => {
    const url = new URL(input);
    if (url.protocol !== 'http:') return reject(new TypeError(`fetch failed: node:http carries http: only, not ${url.protocol}`));
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
    const request = http.request(url, { method, headers: requestHeaders(init?.headers) }, (res) => {
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
    signal?.addEventListener('abort', onAbort, { once: true });
    request.once('error', (error) => {
      release();
      reject(new TypeError('fetch failed', { cause: error }));
    });
    request.end(body);
  });
