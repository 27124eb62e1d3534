/**
 * What a Streamable HTTP connection adds to the MCP client's fetch (main/upstreams/session.ts,
 * which caps every message): it attaches the connection's access token, and only to the
 * connection's own origin (the token goes to that server and nowhere else). On a 401 it refreshes once
 * under the connection's cross-process lock, or picks up tokens another process refreshed
 * meanwhile, and retries the request once (C5); a second 401 is the server's answer. The refresh
 * discovers the authorization server afresh, so a server that moved to another one gets no old
 * refresh token and the person is asked to sign in again. A 403 with
 * insufficient_scope naming scope the last sign-in did not ask for fails the call as needing more
 * access and records it for the next sign-in to ask too (step-up). One naming only scope the
 * last sign-in asked for is a plain refusal: signing in again would ask for the same, so the
 * person is never sent round in a loop.
 */
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { WardError } from '../base/errors.js';
import { withLock } from '../credentials/lock.js';
import { UpstreamError } from '../upstreams/errors.js';
import { coversScope, readChallenge } from './challenge.js';
import type { ConnectionOAuthProvider } from './oauth.js';

export const AUTH_REQUEST_TIMEOUT_MS = 30_000;

/** The scope of a connection's sign-ins. */
export interface ScopeRecord {
  /** What the last sign-in asked for. */
  asked(): string | null;
  /** Records scope the server asks for beyond it, for the next sign-in to ask too. */
  want(scope: string): void;
}

export interface ConnectionFetchOptions {
  readonly serverUrl: URL;
  readonly provider: ConnectionOAuthProvider;
  /** The connection's lock file: refresh and compare-before-delete take it (C4). */
  readonly lockFile: string;
  readonly scopes: ScopeRecord;
}

function requestUrl(input: string | URL | Request): URL {
  return new URL(input instanceof Request ? input.url : input);
}

/** Discovery and token requests (sign-in and refresh), each with a bounded wait; global fetch, as main/upstreams/http-stack.ts explains. */
export const boundedFetch: FetchLike = (url, init) => fetch(url, { ...init, signal: AbortSignal.timeout(AUTH_REQUEST_TIMEOUT_MS) });

/** `base` (the MCP client's capped fetch) with the connection's token attached and refreshed once. */
export function connectionFetch(options: ConnectionFetchOptions, base: FetchLike): FetchLike {
  const origin = options.serverUrl.origin;
  const send = (url: string | URL, init: RequestInit | undefined, token: string | undefined): Promise<Response> => {
    const headers = new Headers(init?.headers);
    headers.delete('authorization');
    if (token !== undefined) headers.set('authorization', `Bearer ${token}`);
    return base(url, { ...init, headers });
  };

  const stepUp = async (response: Response): Promise<Response> => {
    if (response.status !== 403) return response;
    let wanted: string | undefined;
    try {
      const challenge = readChallenge(response, options.serverUrl);
      if (challenge.error === 'insufficient_scope') wanted = challenge.scope;
    } catch (error) {
      await response.body?.cancel().catch(() => undefined);
      throw new UpstreamError('forbidden', describeRefusal(error), { cause: error });
    }
    if (wanted === undefined) return response;
    await response.body?.cancel().catch(() => undefined);
    if (coversScope(options.scopes.asked(), wanted)) {
      throw new UpstreamError('forbidden', `the server asks for scope ${wanted.slice(0, 200)}, which the last sign-in already asked for; signing in again will not help`);
    }
    options.scopes.want(wanted);
    throw new UpstreamError('insufficient_scope', `the server asks for scope ${wanted.slice(0, 200)}: sign in again to grant it`);
  };

  return async (url, init) => {
    // Only the connection's own origin ever sees its token.
    if (requestUrl(url).origin !== origin) return send(url, init, undefined);
    const used = (await options.provider.tokens())?.access_token;
    const response = await send(url, init, used);
    if (response.status !== 401) return stepUp(response);
    await response.body?.cancel().catch(() => undefined);
    const { resourceMetadataUrl } = readChallenge(response, options.serverUrl);
    const fresh = await withLock(options.lockFile, async () => {
      options.provider.reloadTokens();
      const stored = (await options.provider.tokens())?.access_token;
      // Another call or Ward process refreshed while this request was out: use theirs.
      if (stored !== undefined && stored !== used) return stored;
      // Discovered afresh: the server may name another authorization server by now (migration).
      await options.provider.invalidateCredentials('discovery');
      const result = await auth(options.provider, { serverUrl: options.serverUrl, fetchFn: boundedFetch, ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}) });
      if (result !== 'AUTHORIZED') throw new WardError('not_signed_in', 'the connection needs a new sign-in');
      return (await options.provider.tokens())?.access_token;
    });
    return stepUp(await send(url, init, fresh));
  };
}

function describeRefusal(error: unknown): string {
  return error instanceof WardError ? error.message : 'the server sent a malformed WWW-Authenticate header';
}
