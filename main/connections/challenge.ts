/**
 * What a protected MCP server's 401 or 403 asks for (MCP authorization spec 2025-11-25, RFC 9728
 * §5.1, RFC 6750 §3): where its protected resource metadata is, which scope it wants, and why it
 * refused. Both are checked before Ward acts on them: the metadata must be on the server's own
 * origin, and a scope must be a bounded list of RFC 6749 scope tokens.
 */
import { extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import { WardError } from '../base/errors.js';

export const MAX_SCOPE_LENGTH = 1024;
/** RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ). */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

export interface Challenge {
  readonly resourceMetadataUrl?: URL;
  readonly scope?: string;
  /** The RFC 6750 error code, e.g. insufficient_scope. */
  readonly error?: string;
}

function refused(what: string): WardError {
  return new WardError('signin_rejected', `${what}; sign-in refused`);
}

/** A scope as a list of distinct tokens joined by one space; refuses control characters, other separators and oversize. */
export function parseScope(raw: string, where: string): string {
  if (raw.length > MAX_SCOPE_LENGTH) throw refused(`${where} names a scope of ${raw.length} characters, more than ${MAX_SCOPE_LENGTH}`);
  const tokens = raw.split(' ').filter((token) => token !== '');
  if (tokens.length === 0 || !tokens.every((token) => SCOPE_TOKEN.test(token))) throw refused(`${where} names a scope with characters a scope cannot hold`);
  return [...new Set(tokens)].join(' ');
}

/** Reads a 401's or 403's WWW-Authenticate. Metadata on another origin, or a malformed scope, is refused. */
export function readChallenge(response: Response, serverUrl: URL): Challenge {
  const params = extractWWWAuthenticateParams(response);
  const where = `the server's ${response.status} answer`;
  const metadata = params.resourceMetadataUrl;
  if (metadata !== undefined && metadata.origin !== serverUrl.origin) {
    throw refused(`${where} points to protected resource metadata on another origin (${metadata.origin.slice(0, 200)}) than the server (${serverUrl.origin})`);
  }
  return {
    ...(metadata === undefined ? {} : { resourceMetadataUrl: metadata }),
    ...(params.scope === undefined ? {} : { scope: parseScope(params.scope, where) }),
    ...(params.error === undefined || !/^[a-z_]{1,64}$/.test(params.error) ? {} : { error: params.error }),
  };
}

/** The scopes of all arguments, each once, in order of first appearance; undefined when there are none. */
export function unionScopes(...scopes: readonly (string | null | undefined)[]): string | undefined {
  const tokens = new Set(scopes.flatMap((scope) => (scope ?? '').split(' ').filter((token) => token !== '')));
  return tokens.size === 0 ? undefined : [...tokens].join(' ');
}

/** Whether `granted` holds every token of `wanted`. */
export function coversScope(granted: string | null | undefined, wanted: string): boolean {
  const have = new Set((granted ?? '').split(' '));
  return wanted.split(' ').every((token) => have.has(token));
}
