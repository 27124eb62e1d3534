/**
 * The fetch a Streamable HTTP connection uses: a bearer token can only travel to the
 * connection's own origin (the provider's token goes to that server and nowhere else), and
 * every response is capped per message (main/upstreams/capped-fetch.ts).
 */
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { cappedFetch } from '../upstreams/capped-fetch.js';
import { UpstreamError } from './errors.js';

export interface GuardedFetchOptions {
  /** Only requests to this origin may carry `Authorization: Bearer`. */
  readonly origin: string;
  readonly maxMessageBytes: number;
}

function requestUrl(input: string | URL | Request): URL {
  return new URL(input instanceof Request ? input.url : input);
}

export function guardedFetch(options: GuardedFetchOptions): FetchLike {
  const capped = cappedFetch(options.maxMessageBytes, () => undefined);
  return async (url, init) => {
    const authorization = new Headers(init?.headers).get('authorization');
    if (authorization !== null && /^bearer\s/i.test(authorization) && requestUrl(url).origin !== options.origin) {
      // Never hand a connection's token to another host, whatever asked for it.
      throw new UpstreamError('refused', 'Ward refused to send the connection token to another origin');
    }
    return capped(url, init);
  };
}
