/**
 * Signing in to a remote (http) connection: the challenge the server answers without a token,
 * the OAuth authorization through Ward's one loopback callback (main/auth), and sign-in failures
 * in Ward's words. The manager (./manager.ts) records the outcome and replaces the live session.
 */
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { startCallbackServer, SIGNIN_TIMEOUT_MS } from '../auth/loopback-callback.js';
import { WardError, describeError } from '../base/errors.js';
import { classifyUpstreamError } from '../upstreams/errors.js';
import { McpSession, type SessionLimits } from '../upstreams/session.js';
import { readChallenge, unionScopes, type Challenge } from './challenge.js';
import { boundedFetch } from './http-fetch.js';
import { checkRedirectIssuer, issAdvertisements } from './issuer.js';
import { newState, type ConnectionOAuthProvider } from './oauth.js';
import type { ConnectionRecord } from './registry.js';

/** Opens the person's browser at the authorization URL; tests play the browser over HTTP. */
export type OpenBrowser = (url: URL) => Promise<void>;

export interface SignIn {
  /** The server's URL (the http connection's). */
  readonly url: string;
  /** The scope the connection was granted before and the one asked for since (step-up). */
  readonly record: Pick<ConnectionRecord, 'scope' | 'wantedScope'>;
  readonly provider: ConnectionOAuthProvider;
  readonly limits: SessionLimits;
  readonly openBrowser: OpenBrowser;
  readonly timeoutMs?: number;
  /** Called once the tokens are issued, before the callback server closes. */
  readonly signedIn: () => void;
}

/**
 * Signs in: asks the server without a token first (its 401 names the resource metadata and the
 * scope it wants), then authorizes through the loopback callback, whose redirect must name the
 * authorization server's issuer when it names one (RFC 9207). Tokens and a new client
 * registration are stored only on success.
 */
export async function signIn({ url, record, provider, limits, openBrowser, timeoutMs, signedIn }: SignIn): Promise<void> {
  const serverUrl = new URL(url);
  const challenge = await probeChallenge(serverUrl, limits);
  const scope = unionScopes(record.scope, record.wantedScope, challenge.scope);
  const iss = issAdvertisements(boundedFetch);
  const discovery = { serverUrl, fetchFn: iss.fetchFn, ...(challenge.resourceMetadataUrl ? { resourceMetadataUrl: challenge.resourceMetadataUrl } : {}), ...(scope ? { scope } : {}) };
  const state = newState();
  // RFC 9207: the redirect must come from the authorization server this sign-in went to (mix-up).
  const check = (url: URL): void => checkRedirectIssuer(url, provider.discoveryState(), iss.advertised(provider.discoveryState()));
  const callback = await startCallbackServer({ expectedState: state, timeoutMs: timeoutMs ?? SIGNIN_TIMEOUT_MS, check });
  try {
    provider.setInteractive({ redirectUrl: callback.redirectUri, state, onAuthorizationUrl: openBrowser });
    // A sign-in starts from scratch: the old tokens are not refreshed, only replaced on success.
    provider.forgetTokensInMemory();
    const started = await signInStep(() => auth(provider, discovery));
    if (started === 'REDIRECT') {
      const code = authorizationCode(await callback.result);
      const finished = await signInStep(() => auth(provider, { ...discovery, authorizationCode: code }));
      if (finished !== 'AUTHORIZED') throw new WardError('signin_rejected', 'the authorization server did not issue tokens');
    }
    signedIn();
  } finally {
    provider.setInteractive(undefined);
    await callback.close();
  }
}

/**
 * What the server says without a token (initialize, then tools/list): the first 401 or 403
 * challenge, checked (readChallenge), or nothing when it asks for none. Bounded by the session limits.
 */
async function probeChallenge(serverUrl: URL, limits: SessionLimits): Promise<Challenge> {
  let seen: Challenge | undefined;
  let refusal: unknown;
  const noting = (fetch: FetchLike): FetchLike => async (url, init) => {
    const response = await fetch(url, init);
    if ((response.status === 401 || response.status === 403) && seen === undefined && refusal === undefined) {
      try {
        seen = readChallenge(response, serverUrl);
      } catch (error) {
        refusal = error;
      }
    }
    return response;
  };
  const session = await McpSession.open({ transport: 'http', url: serverUrl, authorize: noting }, limits).catch(() => undefined);
  if (session !== undefined) {
    await session.listTools().catch(() => undefined);
    await session.close();
  }
  if (refusal !== undefined) throw refusal;
  return seen ?? {};
}

async function signInStep<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof WardError) throw error;
    const failure = classifyUpstreamError(error);
    if (failure.code === 'unreachable') throw new WardError('provider_unreachable', `the server or its authorization server could not be reached (${failure.detail})`, { cause: error });
    // OAuth error descriptions are the server's words: only the standard error code is shown.
    const oauthCode = (error as { errorCode?: unknown }).errorCode;
    const what = typeof oauthCode === 'string' && /^[a-z_]{1,64}$/.test(oauthCode) ? `the authorization server answered ${oauthCode}` : describeError(error).slice(0, 200);
    throw new WardError('signin_rejected', `sign-in failed: ${what}`, { cause: error });
  }
}

/** The authorization code of the one accepted callback (it carries a code or an error), or why there is none. */
function authorizationCode(callback: URL): string {
  const error = callback.searchParams.get('error');
  if (error !== null) throw new WardError('signin_rejected', `the authorization server refused the sign-in (${error.replace(/[^A-Za-z0-9_.-]/g, '').slice(0, 64)})`);
  return callback.searchParams.get('code') ?? '';
}
