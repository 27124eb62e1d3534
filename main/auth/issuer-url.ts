import { isIP } from 'node:net';
import { WardError } from '../base/errors.js';

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

export function isLoopbackHostname(hostname: string): boolean {
  if (LOOPBACK_NAMES.has(hostname)) return true;
  return isIP(hostname) === 4 && hostname.startsWith('127.');
}

/**
 * An identity provider's issuer URL (L1): https, or http only on a loopback host unless the
 * operator explicitly allows insecure http. Credentials in the URL, fragments and other
 * schemes are refused.
 */
export function parseIssuerUrl(raw: string, options: { allowInsecureHttp?: boolean } = {}): URL {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > 2_048) throw new WardError('invalid_config', 'the issuer URL is missing or longer than 2048 characters');
  let url: URL;
  try {
    url = new URL(raw);
  } catch (error) {
    throw new WardError('invalid_config', `the issuer ${JSON.stringify(raw.slice(0, 80))} is not a URL`, { cause: error });
  }
  if (url.username !== '' || url.password !== '') throw new WardError('invalid_config', 'the issuer URL must not contain a user name or password');
  if (url.hash !== '' || url.search !== '') throw new WardError('invalid_config', 'the issuer URL must not have a query or a fragment');
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:') {
    if (isLoopbackHostname(url.hostname) || options.allowInsecureHttp === true) return url;
    throw new WardError('invalid_config', `the issuer ${url.origin} uses http on a non-loopback host; use https (an operator may override with --allow-insecure-http)`);
  }
  throw new WardError('invalid_config', `the issuer URL must use https (got ${url.protocol})`);
}
