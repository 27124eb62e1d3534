/**
 * Which authorization server a connection's sign-in talks to, checked where the SDK's `auth()`
 * leaves it open (mix-up attacks): the metadata must name the issuer it was fetched for (RFC 8414
 * §3.3, OpenID Connect Discovery §4.3), the redirect's `iss` must be that issuer exactly (RFC
 * 9207), and credentials from one authorization server are never offered to another. Also the
 * RFC 8707 resource indicator, sent exactly as the server's metadata spells it.
 */
import type { OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { WardError } from '../base/errors.js';

const shown = (value: string): string => JSON.stringify(value.slice(0, 200));

function refused(what: string): WardError {
  return new WardError('signin_rejected', `${what}; sign-in refused`);
}

/**
 * Whether `issuer` is the issuer identifier `identifier`: identical, except that a terminating
 * "/" is not part of how the metadata URL is built (RFC 8414 §3.1), so one on either side is
 * allowed (the SDK's fallback for a server without resource metadata always adds one).
 */
export function sameIssuer(identifier: string, issuer: string): boolean {
  return identifier === issuer || identifier.replace(/\/$/, '') === issuer.replace(/\/$/, '');
}

/**
 * RFC 8414 §3.3: metadata naming another issuer than the one it was fetched for is not used. The
 * issuer is known only when the server's protected resource metadata named it; a 2025-03-26
 * server has none, and its metadata is looked up at its own origin, which names no issuer to
 * hold it to (that revision's metadata may say /oauth there, and the sign-in goes on).
 */
export function checkMetadataIssuer(state: OAuthDiscoveryState): void {
  const metadata = state.authorizationServerMetadata;
  if (metadata === undefined || state.resourceMetadata === undefined || sameIssuer(state.authorizationServerUrl, metadata.issuer)) return;
  throw refused(`the authorization server's metadata names issuer ${shown(metadata.issuer)} but was fetched for ${shown(state.authorizationServerUrl)}`);
}

/** The issuer a sign-in's redirect must name: the metadata's, or a server's own origin when it has none (2025-03-26). */
function expectedIssuer(state: OAuthDiscoveryState): string {
  return state.authorizationServerMetadata?.issuer ?? new URL(state.authorizationServerUrl).origin;
}

/**
 * RFC 9207 on the redirect back to Ward: an `iss` must be the authorization server's issuer,
 * compared as strings (no normalisation), whether or not the server advertised it; a server that
 * advertised it must send it.
 */
export function checkRedirectIssuer(callback: URL, state: OAuthDiscoveryState | undefined, advertised: boolean): void {
  if (state === undefined) throw refused('the redirect came back before the authorization server was known');
  const iss = callback.searchParams.get('iss');
  const expected = expectedIssuer(state);
  if (iss === null) {
    if (advertised) throw refused(`the authorization server ${shown(expected)} says its redirects name it (authorization_response_iss_parameter_supported) but this one carries no iss`);
    return;
  }
  if (iss !== expected) throw refused(`the authorization server's redirect names issuer ${shown(iss)} but this sign-in went to ${shown(expected)}`);
}

/**
 * Whether the authorization server advertises `iss` on its redirects. The SDK keeps that flag from
 * RFC 8414 metadata but drops it from OpenID Connect discovery documents, so the metadata
 * responses are read as they pass through the sign-in's fetch as well.
 */
export function issAdvertisements(fetchFn: FetchLike): { readonly fetchFn: FetchLike; advertised(state: OAuthDiscoveryState | undefined): boolean } {
  const advertising = new Set<string>();
  const noting: FetchLike = async (url, init) => {
    const response = await fetchFn(url, init);
    const path = new URL(url).pathname;
    if (response.ok && (path.includes('/.well-known/oauth-authorization-server') || path.endsWith('/.well-known/openid-configuration'))) {
      const body = (await response.clone().json().catch(() => undefined)) as { issuer?: unknown; authorization_response_iss_parameter_supported?: unknown } | undefined;
      if (typeof body?.issuer === 'string' && body.authorization_response_iss_parameter_supported === true) advertising.add(body.issuer);
    }
    return response;
  };
  return {
    fetchFn: noting,
    advertised: (state) => {
      const metadata = state?.authorizationServerMetadata;
      if (metadata === undefined) return false;
      return (metadata as { authorization_response_iss_parameter_supported?: unknown }).authorization_response_iss_parameter_supported === true || advertising.has(metadata.issuer);
    },
  };
}

/** The authorization server a stored token set or registration was issued by (the SDK stamps it), if recorded. */
export function storedIssuer(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  try {
    const issuer = (JSON.parse(raw) as { issuer?: unknown }).issuer;
    return typeof issuer === 'string' ? issuer : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A resource indicator sent exactly as written. The SDK sends the `href` of the URL it is given,
 * and a URL's `href` adds "/" to a bare origin ("https://mcp.example.com" becomes
 * "https://mcp.example.com/"), which an authorization server matching resources exactly refuses.
 */
export function exactResource(text: string): URL {
  const url = new URL(text);
  const spelled = { value: text, enumerable: true };
  Object.defineProperties(url, { href: spelled, toString: { value: () => text }, toJSON: { value: () => text } });
  return url;
}

/**
 * The resource of a server without protected resource metadata: its URL, with a bare origin
 * written without the "/" URL parsing adds (the MCP authorization spec's canonical server URI).
 */
export function canonicalServerUri(url: URL): string {
  const bare = url.pathname === '/' && url.search === '' && !url.href.endsWith('?');
  return bare ? url.origin : url.href;
}
