import * as client from 'openid-client';
import { WardError, describeError } from '../base/errors.js';
import { parseIssuerUrl } from './issuer-url.js';

export const REQUEST_TIMEOUT_MS = 30_000;

export interface ProviderOptions {
  readonly allowInsecureHttp?: boolean;
  /** Bound on each request to the provider (discovery, token, revocation). */
  readonly requestTimeoutMs?: number;
}

function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let current = error; current !== undefined && current !== null && chain.length < 8; current = (current as { cause?: unknown }).cause) {
    chain.push(current);
  }
  return chain;
}

/**
 * Maps what openid-client and fetch throw to Ward's codes: the provider cannot be reached,
 * did not answer in time, or answered with an OAuth error (its `error` code only; raw bodies
 * are never passed on). `during` names the step for the person reading the message.
 */
export function providerError(error: unknown, during: string, rejectedCode: 'signin_rejected' | 'not_signed_in' = 'signin_rejected'): WardError {
  if (error instanceof WardError) return error;
  for (const item of causes(error)) {
    const name = (item as { name?: string }).name;
    const code = (item as { code?: string }).code;
    if (name === 'TimeoutError' || name === 'AbortError') {
      return new WardError('provider_timeout', `${during}: the identity provider did not answer in time`, { cause: error });
    }
    if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'ECONNRESET' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || code === 'UND_ERR_SOCKET') {
      return new WardError('provider_unreachable', `${during}: cannot reach the identity provider (${code})`, { cause: error });
    }
    if (item instanceof client.ResponseBodyError || item instanceof client.AuthorizationResponseError) {
      const oauthCode = /^[\x20-\x7e]{1,64}$/.test(item.error) ? item.error : 'error';
      return new WardError(rejectedCode, `${during}: the identity provider refused (${oauthCode})`, { cause: error });
    }
  }
  return new WardError(rejectedCode, `${during}: ${describeError(error).slice(0, 200)}`, { cause: error });
}

/** Discovery over https (or loopback http); the public client authenticates with PKCE only. */
export async function discoverProvider(issuer: string, clientId: string, options: ProviderOptions = {}): Promise<client.Configuration> {
  const url = parseIssuerUrl(issuer, options);
  if (clientId.length === 0 || clientId.length > 256 || !/^[\x21-\x7e]+$/.test(clientId)) {
    throw new WardError('invalid_config', 'the client id must be 1 to 256 printable characters without spaces');
  }
  const timeout = (options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS) / 1000;
  try {
    return await client.discovery(url, clientId, undefined, client.None(), {
      timeout,
      execute: url.protocol === 'http:' ? [client.allowInsecureRequests] : [],
    });
  } catch (error) {
    throw providerError(error, `discovery at ${url.origin}`);
  }
}
