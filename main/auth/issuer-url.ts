import { WardError } from '../base/errors.js';
import { requireServerUrl, type UrlRefusal } from '../base/url-policy.js';

function issuerProblem(refusal: UrlRefusal, raw: string): string {
  switch (refusal.reason) {
    case 'not_a_url':
      return `the issuer ${JSON.stringify(raw.slice(0, 80))} is not a URL`;
    case 'credentials':
      return 'the issuer URL must not contain a user name or password';
    case 'scheme':
      return `the issuer URL must use https (got ${refusal.url.protocol})`;
    case 'insecure_http':
      return `the issuer ${refusal.url.origin} uses http on a non-loopback host; use https (an operator may override with --allow-insecure-http)`;
  }
}

/**
 * An identity provider's issuer URL, by Ward's one URL policy (L1, main/base/url-policy.ts):
 * https, or http only on a loopback host unless the operator explicitly allows insecure http;
 * no credentials. An issuer also has no query or fragment.
 */
export function parseIssuerUrl(raw: string, options: { allowInsecureHttp?: boolean } = {}): URL {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > 2_048) throw new WardError('invalid_config', 'the issuer URL is missing or longer than 2048 characters');
  const url = requireServerUrl(raw, options.allowInsecureHttp === true, (refusal) => new WardError('invalid_config', issuerProblem(refusal, raw)));
  if (url.hash !== '' || url.search !== '') throw new WardError('invalid_config', 'the issuer URL must not have a query or a fragment');
  return url;
}
