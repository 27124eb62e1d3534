import type { TokenEndpointResponse } from 'openid-client';
import { WardError } from '../base/errors.js';

/** What the credential store holds for one session (one entry, so compare-before-delete sees all of it). */
export interface StoredTokens {
  readonly v: 1;
  readonly accessToken: string;
  readonly refreshToken?: string;
  readonly idToken?: string;
  readonly tokenType: string;
  /** Epoch milliseconds, when the provider told. */
  readonly expiresAt?: number;
}

export function tokensFromResponse(response: TokenEndpointResponse, previous?: StoredTokens, now = Date.now()): StoredTokens {
  const refreshToken = response.refresh_token ?? previous?.refreshToken;
  const idToken = response.id_token ?? previous?.idToken;
  return {
    v: 1,
    accessToken: response.access_token,
    ...(refreshToken !== undefined ? { refreshToken } : {}),
    ...(idToken !== undefined ? { idToken } : {}),
    tokenType: response.token_type,
    ...(typeof response.expires_in === 'number' ? { expiresAt: now + response.expires_in * 1000 } : {}),
  };
}

export function encodeTokens(tokens: StoredTokens): string {
  return JSON.stringify(tokens);
}

export function decodeTokens(raw: string): StoredTokens {
  try {
    const parsed = JSON.parse(raw) as Partial<StoredTokens>;
    if (parsed.v === 1 && typeof parsed.accessToken === 'string' && typeof parsed.tokenType === 'string') return parsed as StoredTokens;
  } catch {
    // fall through without echoing the stored value
  }
  throw new WardError('not_signed_in', 'the stored sign-in is unreadable; sign in again with "ward login"');
}

/** Refresh a little before expiry so a request does not race the deadline. */
export function isExpired(tokens: StoredTokens, now = Date.now(), skewMs = 30_000): boolean {
  return tokens.expiresAt !== undefined && tokens.expiresAt - skewMs <= now;
}
