import * as client from 'openid-client';
import { WardError } from '../base/errors.js';
import { withLock } from '../credentials/lock.js';
import type { OpenBrowser } from './browser.js';
import { registryOf, sessionLockPath, type AuthContext } from './context.js';
import { startCallbackServer, SIGNIN_TIMEOUT_MS } from './loopback-callback.js';
import { discoverProvider, providerError } from './oidc.js';
import { newSessionId, sessionAccount, type SessionRecord } from './registry.js';
import type { SessionSelector } from './session.js';
import { decodeTokens, encodeTokens, tokensFromResponse } from './tokens.js';

export const DEFAULT_SCOPE = 'openid offline_access';

export interface SignInOptions {
  readonly issuer: string;
  readonly clientId: string;
  readonly scope?: string;
  /** Operator override for a non-loopback http:// issuer (L1). */
  readonly allowInsecureHttp?: boolean;
  /** Opens the system browser; its failure is not fatal, the URL is also handed to `onAuthorizationUrl`. */
  readonly openBrowser: OpenBrowser;
  readonly onAuthorizationUrl?: (url: URL) => void;
  /** Bound on the whole wait for the browser to come back (default 5 min). */
  readonly timeoutMs?: number;
  readonly isAllowedPeer?: (address: string | undefined) => boolean;
}

export interface SignInResult {
  readonly session: SessionRecord;
  /**
   * An older session of the same identity could not be revoked yet: the new sign-in is in force
   * and the old one is kept, marked, for `ward logout` to finish. Not a failure.
   */
  readonly cleanupRequired: boolean;
}

/**
 * Revokes a session's tokens at the provider when it advertises revocation, then forgets them
 * locally. Throws (keeping everything) when revocation fails.
 */
async function retire(context: AuthContext, config: client.Configuration | undefined, record: SessionRecord): Promise<{ revoked: boolean }> {
  return withLock(
    sessionLockPath(context, record),
    async () => {
      const account = sessionAccount(record);
      const raw = await context.store.get(account);
      let revoked = false;
      if (raw !== undefined && config?.serverMetadata().revocation_endpoint !== undefined) {
        const tokens = decodeTokens(raw);
        try {
          if (tokens.refreshToken !== undefined) await client.tokenRevocation(config, tokens.refreshToken, { token_type_hint: 'refresh_token' });
          await client.tokenRevocation(config, tokens.accessToken, { token_type_hint: 'access_token' });
        } catch (error) {
          throw providerError(error, 'token revocation', 'signin_rejected');
        }
        revoked = true;
      }
      if (raw !== undefined) await context.store.compareAndDelete(account, raw);
      return { revoked };
    },
    { timeoutMs: context.lockTimeoutMs },
  );
}

/**
 * Sign-in (C5): discovery, then authorization code with PKCE S256, `state` and `nonce`, through
 * the system browser and a one-shot loopback callback. Tokens go to the credential store only;
 * the registry keeps public metadata. An older session of the same identity is revoked and
 * forgotten; if that cannot happen now, the sign-in still succeeds with `cleanupRequired`.
 */
export async function signIn(context: AuthContext, options: SignInOptions): Promise<SignInResult> {
  // Fail before the person signs in, not after: the tokens must have somewhere safe to go.
  await context.store.get('signin-probe');
  const providerOptions = { allowInsecureHttp: options.allowInsecureHttp, requestTimeoutMs: context.requestTimeoutMs };
  const config = await discoverProvider(options.issuer, options.clientId, providerOptions);
  const methods = config.serverMetadata().code_challenge_methods_supported;
  if (!Array.isArray(methods) || !methods.includes('S256')) {
    throw new WardError('signin_rejected', `${options.issuer} does not advertise PKCE S256; Ward signs in only with S256`);
  }
  const scope = options.scope ?? DEFAULT_SCOPE;
  if (!/^[\x21-\x7e]+( [\x21-\x7e]+)*$/.test(scope) || !scope.split(' ').includes('openid')) {
    throw new WardError('invalid_config', 'the scope must be space-separated printable words and include "openid"');
  }

  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const callback = await startCallbackServer({ expectedState: state, timeoutMs: options.timeoutMs ?? SIGNIN_TIMEOUT_MS, isAllowedPeer: options.isAllowedPeer });
  let callbackUrl: URL;
  try {
    const authorizationUrl = client.buildAuthorizationUrl(config, {
      redirect_uri: callback.redirectUri,
      scope,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    options.onAuthorizationUrl?.(authorizationUrl);
    await options.openBrowser(authorizationUrl).catch(() => undefined);
    callbackUrl = await callback.result;
  } finally {
    await callback.close();
  }

  let response: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
  try {
    // The URL we registered plus the received parameters: nothing from the request's Host is trusted.
    const current = new URL(callback.redirectUri);
    current.search = callbackUrl.search;
    response = await client.authorizationCodeGrant(config, current, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true });
  } catch (error) {
    throw providerError(error, 'sign-in');
  }
  const subject = response.claims()?.sub;
  if (subject === undefined) throw new WardError('signin_rejected', 'sign-in: the identity provider returned no subject');
  const tokens = tokensFromResponse(response);

  const record: SessionRecord = {
    id: newSessionId(),
    issuer: config.serverMetadata().issuer,
    clientId: options.clientId,
    subject,
    scope: typeof response.scope === 'string' ? response.scope : scope,
    allowInsecureHttp: options.allowInsecureHttp === true,
    signedInAt: new Date().toISOString(),
    expiresAt: tokens.expiresAt === undefined ? null : new Date(tokens.expiresAt).toISOString(),
    cleanupPending: false,
  };
  return keepSession(context, config, record, tokens);
}

/**
 * Stores the new session's tokens and records it; an older session of the same identity is
 * revoked and forgotten, or kept marked for cleanup when that cannot happen now.
 */
async function keepSession(context: AuthContext, config: client.Configuration, record: SessionRecord, tokens: ReturnType<typeof tokensFromResponse>): Promise<SignInResult> {
  await context.store.set(sessionAccount(record), encodeTokens(tokens));
  try {
    return await registryOf(context).mutate(async (records) => {
      let cleanupRequired = false;
      const kept: SessionRecord[] = [];
      for (const old of records) {
        const sameIdentity = old.issuer === record.issuer && old.clientId === record.clientId && old.subject === record.subject;
        if (!sameIdentity) {
          kept.push(old);
          continue;
        }
        try {
          await retire(context, config, old);
        } catch {
          cleanupRequired = true;
          kept.push({ ...old, cleanupPending: true });
        }
      }
      return { records: [...kept, record], result: { session: record, cleanupRequired } };
    });
  } catch (error) {
    await context.store.delete(sessionAccount(record)).catch(() => undefined);
    throw error;
  }
}

export interface SignOutResult {
  readonly signedOut: { issuer: string; subject: string; revoked: boolean }[];
  readonly kept: { issuer: string; subject: string; reason: string }[];
}

/**
 * Logout: for each matching session (including ones left for cleanup), revoke at the provider
 * when it supports revocation, then forget locally. A session whose revocation fails is kept
 * so that a later logout can finish it, unless `localOnly` forgets without revoking.
 */
export async function signOut(context: AuthContext, selector: SessionSelector = {}, options: { localOnly?: boolean } = {}): Promise<SignOutResult> {
  return registryOf(context).mutate(async (records) => {
    const result: SignOutResult = { signedOut: [], kept: [] };
    const remaining: SessionRecord[] = [];
    const configs = new Map<string, client.Configuration>();
    for (const record of records) {
      const matches = (selector.issuer === undefined || record.issuer === selector.issuer) && (selector.clientId === undefined || record.clientId === selector.clientId);
      if (!matches) {
        remaining.push(record);
        continue;
      }
      try {
        if (options.localOnly) {
          await context.store.delete(sessionAccount(record));
          result.signedOut.push({ issuer: record.issuer, subject: record.subject, revoked: false });
          continue;
        }
        const key = `${record.issuer}\0${record.clientId}`;
        let config = configs.get(key);
        if (config === undefined) {
          config = await discoverProvider(record.issuer, record.clientId, { allowInsecureHttp: record.allowInsecureHttp, requestTimeoutMs: context.requestTimeoutMs });
          configs.set(key, config);
        }
        const { revoked } = await retire(context, config, record);
        result.signedOut.push({ issuer: record.issuer, subject: record.subject, revoked });
      } catch (error) {
        if (error instanceof WardError && error.code === 'keychain_unavailable') throw error;
        remaining.push(record);
        result.kept.push({ issuer: record.issuer, subject: record.subject, reason: error instanceof Error ? error.message : String(error) });
      }
    }
    return { records: remaining, result };
  });
}
