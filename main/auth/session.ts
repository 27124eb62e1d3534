import * as client from 'openid-client';
import { WardError } from '../base/errors.js';
import { wardCommand } from '../namespaces/namespace.js';
import { withLock } from '../credentials/lock.js';
import { sameSecret } from '../credentials/secret-store.js';
import { registryOf, sessionLockPath, type AuthContext } from './context.js';
import { discoverProvider, providerError } from './oidc.js';
import { sessionAccount, type SessionRecord } from './registry.js';
import { decodeTokens, encodeTokens, isExpired, tokensFromResponse, type StoredTokens } from './tokens.js';

export interface SessionSelector {
  readonly issuer?: string;
  readonly clientId?: string;
}

/** Active (not cleanup-pending) sessions matching the selector. */
export function findSessions(context: AuthContext, selector: SessionSelector = {}): SessionRecord[] {
  return registryOf(context)
    .list()
    .filter((record) => !record.cleanupPending)
    .filter((record) => selector.issuer === undefined || record.issuer === selector.issuer)
    .filter((record) => selector.clientId === undefined || record.clientId === selector.clientId);
}

/** Calls `fn` with the access token of the one matching sign-in (see Session.withAccessToken). */
export function withAccessToken<T extends { readonly status: number }>(context: AuthContext, selector: SessionSelector, fn: (accessToken: string) => Promise<T>): Promise<T> {
  return openSession(context, selector).withAccessToken(fn);
}

/** Exactly one signed-in session, or a clear error saying how to get or pick one. */
export function openSession(context: AuthContext, selector: SessionSelector = {}): Session {
  const found = findSessions(context, selector);
  if (found.length === 0) throw new WardError('not_signed_in', `not signed in${selector.issuer ? ` to ${selector.issuer}` : ''} in namespace ${context.namespace.name}; run ${wardCommand(context.namespace, `login --issuer ${selector.issuer ?? 'URL'} --client-id ${selector.clientId ?? 'ID'}`)}`);
  if (found.length > 1) throw new WardError('usage', `several sign-ins match in namespace ${context.namespace.name}; name one with --issuer and --client-id`);
  return new Session(context, found[0]!);
}

/**
 * One sign-in's tokens. Refresh runs under the session's cross-process lock and first compares
 * what is stored with what the caller saw: if another process already rotated, its result is
 * used instead of spending the (single-use) refresh token again.
 */
export class Session {
  readonly account: string;

  constructor(
    readonly context: AuthContext,
    readonly record: SessionRecord,
  ) {
    this.account = sessionAccount(record);
  }

  /** The exact command that signs this identity in again. */
  private loginCommand(): string {
    return wardCommand(this.context.namespace, `login --issuer ${this.record.issuer} --client-id ${this.record.clientId}`);
  }

  private lock<T>(fn: () => Promise<T>): Promise<T> {
    return withLock(sessionLockPath(this.context, this.record), fn, { timeoutMs: this.context.lockTimeoutMs });
  }

  private async stored(): Promise<{ raw: string; tokens: StoredTokens }> {
    const raw = await this.context.store.get(this.account);
    if (raw === undefined) throw new WardError('not_signed_in', `the sign-in to ${this.record.issuer} has no stored tokens any more; run ${this.loginCommand()}`);
    return { raw, tokens: decodeTokens(raw) };
  }

  /** Current tokens, refreshed first when the access token has expired. */
  async tokens(): Promise<StoredTokens> {
    const { tokens } = await this.stored();
    return isExpired(tokens) ? this.refresh(tokens) : tokens;
  }

  /**
   * One refresh with rotation. `observed` is what the caller used: when the store already
   * holds something else, another process refreshed meanwhile and that is returned as is.
   * A refresh token the provider rejects ends the session: its tokens are deleted only if they
   * are still the ones this call read, under the lock (C4).
   */
  async refresh(observed?: StoredTokens): Promise<StoredTokens> {
    const outcome = await this.lock(async (): Promise<{ tokens: StoredTokens; rotated: boolean } | { ended: WardError }> => {
      const { raw, tokens } = await this.stored();
      if (observed !== undefined && !sameSecret(tokens.accessToken, observed.accessToken)) return { tokens, rotated: false };
      if (tokens.refreshToken === undefined) throw new WardError('not_signed_in', `the sign-in to ${this.record.issuer} expired and cannot be renewed; run ${this.loginCommand()}`);
      const config = await discoverProvider(this.record.issuer, this.record.clientId, { allowInsecureHttp: this.record.allowInsecureHttp, requestTimeoutMs: this.context.requestTimeoutMs });
      let response: client.TokenEndpointResponse;
      try {
        response = await client.refreshTokenGrant(config, tokens.refreshToken);
      } catch (error) {
        const mapped = providerError(error, 'token refresh', 'not_signed_in');
        if (mapped.code === 'not_signed_in') {
          await this.context.store.compareAndDelete(this.account, raw);
          return { ended: mapped };
        }
        throw mapped;
      }
      const next = tokensFromResponse(response, tokens);
      await this.context.store.set(this.account, encodeTokens(next));
      return { tokens: next, rotated: true };
    });
    if ('ended' in outcome) {
      await this.forgetRecord();
      throw new WardError('not_signed_in', `${outcome.ended.message}; the sign-in ended, run ${this.loginCommand()}`, { cause: outcome.ended });
    }
    if (outcome.rotated) await this.noteExpiry(outcome.tokens);
    return outcome.tokens;
  }

  /**
   * Calls `fn` with the access token. A 401 leads to one refresh and one retry with the new
   * token, never more and never with another credential; a second 401 is `unauthorized`.
   */
  async withAccessToken<T extends { readonly status: number }>(fn: (accessToken: string) => Promise<T>): Promise<T> {
    const first = await this.tokens();
    const answer = await fn(first.accessToken);
    if (answer.status !== 401) return answer;
    const renewed = await this.refresh(first);
    const retried = await fn(renewed.accessToken);
    if (retried.status === 401) {
      throw new WardError('unauthorized', `${this.record.issuer} refused the renewed sign-in as well (401); Ward does not retry again. Sign in again with ${this.loginCommand()} if this persists`);
    }
    return retried;
  }

  /** Registry bookkeeping happens outside the session lock (lock order: registry before session). */
  private async noteExpiry(tokens: StoredTokens): Promise<void> {
    const expiresAt = tokens.expiresAt === undefined ? null : new Date(tokens.expiresAt).toISOString();
    await registryOf(this.context).mutate((records) => ({
      records: records.map((record) => (record.id === this.record.id ? { ...record, expiresAt } : record)),
      result: undefined,
    }));
  }

  private async forgetRecord(): Promise<void> {
    await registryOf(this.context).mutate((records) => ({ records: records.filter((record) => record.id !== this.record.id), result: undefined }));
  }
}
