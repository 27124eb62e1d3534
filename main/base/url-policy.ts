/**
 * The one policy for URLs of servers Ward talks to (L1): https anywhere; plain http only to a
 * loopback host, unless the caller passes an explicit override; never a user name or password in
 * the URL. Each caller words a refusal for its own setting (a flag, a profile file, a variable).
 */

/** The names Ward treats as this machine, as `URL.hostname` spells them. */
const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['127.0.0.1', '::1', '[::1]', 'localhost']);

export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname);
}

export type UrlRefusal =
  | { readonly reason: 'not_a_url' }
  | { readonly reason: 'scheme' | 'credentials' | 'insecure_http'; readonly url: URL };

/** The parsed URL, or why the policy refuses it (checked in this order). */
export function checkServerUrl(raw: string, options: { readonly allowInsecureHttp?: boolean } = {}): { readonly url: URL } | UrlRefusal {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { reason: 'not_a_url' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { reason: 'scheme', url };
  if (url.username !== '' || url.password !== '') return { reason: 'credentials', url };
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname) && options.allowInsecureHttp !== true) return { reason: 'insecure_http', url };
  return { url };
}

/** The parsed URL, or the error `refuse` makes of the refusal. */
export function requireServerUrl(raw: string, allowInsecureHttp: boolean, refuse: (refusal: UrlRefusal) => Error): URL {
  const checked = checkServerUrl(raw, { allowInsecureHttp });
  if ('reason' in checked) throw refuse(checked);
  return checked.url;
}
