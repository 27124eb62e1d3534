/**
 * Which MCP servers a policy allows, by what they are (P5): a remote server by its URL, a local
 * one by its command and arguments. Never by the name a user gives a connection: anyone can
 * name a server "github".
 *
 * Entries:
 *   https://mcp.example.com/mcp       that URL exactly
 *   https://mcp.example.com/*         any path on that host (a prefix: the path up to the "*")
 *   https://*.example.com/*           any subdomain of example.com (not example.com itself)
 *   /opt/mcp/bin/tracker --readonly   that command with exactly these arguments
 *   /opt/mcp/bin/tracker *            that command with any arguments after the listed ones
 *   ["/opt/My MCP/server", "--x y"]   a JSON array, for a command or arguments with spaces
 */
import { WardError } from '../base/errors.js';
import { shown } from '../permissions/grants.js';

/** What a connection is, as far as the policy cares. */
export type ConnectionIdentity =
  | { readonly transport: 'http'; readonly url: string }
  /** `sandbox`: its sandbox profile when it has one (null or absent: it would run unconfined). */
  | { readonly transport: 'stdio'; readonly command: string; readonly args: readonly string[]; readonly sandbox?: object | null };

interface UrlMatcher {
  readonly kind: 'url';
  readonly text: string;
  readonly protocol: string;
  /** Without the "*." of a wildcard. */
  readonly host: string;
  readonly wildcardHost: boolean;
  readonly port: string;
  /** The exact path and query, or the prefix the path must start with. */
  readonly path: string;
  readonly prefix: boolean;
}

interface CommandMatcher {
  readonly kind: 'command';
  readonly text: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly moreArgs: boolean;
}

export type ConnectionMatcher = UrlMatcher | CommandMatcher;

function bad(entry: string, why: string): WardError {
  return new WardError('policy_invalid', `connection entry ${shown(entry)} ${why}`);
}

function effectivePort(url: URL): string {
  return url.port !== '' ? url.port : url.protocol === 'http:' ? '80' : '443';
}

function parseUrlMatcher(entry: string): UrlMatcher {
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    throw bad(entry, 'is not a URL');
  }
  if (url.username !== '' || url.password !== '') throw bad(entry, 'must not carry a user name or password');
  if (url.hash !== '') throw bad(entry, 'must not have a fragment');
  const wildcardHost = url.hostname.startsWith('*.');
  const host = wildcardHost ? url.hostname.slice(2) : url.hostname;
  if (host.includes('*') || host === '') throw bad(entry, 'may use "*" only as "*." at the start of the host');
  const prefix = url.pathname.endsWith('/*') && url.search === '';
  const path = prefix ? url.pathname.slice(0, -1) : `${url.pathname}${url.search}`;
  if (path.includes('*')) throw bad(entry, 'may use "*" in the path only as its last segment ("/*")');
  return { kind: 'url', text: entry, protocol: url.protocol, host, wildcardHost, port: effectivePort(url), path, prefix };
}

function parseCommandMatcher(entry: string): CommandMatcher {
  let words: string[];
  if (entry.trimStart().startsWith('[')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(entry);
    } catch {
      throw bad(entry, 'is not a valid JSON array');
    }
    if (!Array.isArray(parsed) || parsed.length === 0 || !parsed.every((word) => typeof word === 'string')) throw bad(entry, 'must be a JSON array of strings, the command first');
    words = parsed as string[];
  } else {
    words = entry.trim().split(/\s+/);
  }
  const [command, ...rest] = words;
  if (command === undefined || command === '' || command === '*') throw bad(entry, 'names no command');
  if (command.includes('/') && !command.startsWith('/') && !/^[A-Za-z]:[\\/]/.test(command)) throw bad(entry, 'must start with an absolute path or a program name');
  const moreArgs = rest.at(-1) === '*';
  return { kind: 'command', text: entry, command, args: moreArgs ? rest.slice(0, -1) : rest, moreArgs };
}

/** Parses one allowedConnections/deniedConnections entry; a malformed one fails closed (L1). */
export function parseConnectionMatcher(entry: string): ConnectionMatcher {
  return /^https?:\/\//i.test(entry) ? parseUrlMatcher(entry) : parseCommandMatcher(entry);
}

function hostMatches(matcher: UrlMatcher, hostname: string): boolean {
  return matcher.wildcardHost ? hostname.endsWith(`.${matcher.host}`) : hostname === matcher.host;
}

export function matchesConnection(matcher: ConnectionMatcher, identity: ConnectionIdentity): boolean {
  if (matcher.kind === 'url') {
    if (identity.transport !== 'http') return false;
    let url: URL;
    try {
      url = new URL(identity.url);
    } catch {
      return false;
    }
    if (url.protocol !== matcher.protocol || effectivePort(url) !== matcher.port || !hostMatches(matcher, url.hostname)) return false;
    return matcher.prefix ? url.pathname.startsWith(matcher.path) : `${url.pathname}${url.search}` === matcher.path;
  }
  if (identity.transport !== 'stdio' || identity.command !== matcher.command) return false;
  if (!matcher.moreArgs && identity.args.length !== matcher.args.length) return false;
  return matcher.args.every((arg, index) => identity.args[index] === arg);
}

/** True when every server `inner` matches is also matched by `outer` (to merge two allow lists). */
export function matcherWithin(inner: ConnectionMatcher, outer: ConnectionMatcher): boolean {
  if (inner.kind === 'url' && outer.kind === 'url') {
    if (inner.protocol !== outer.protocol || inner.port !== outer.port) return false;
    const hostOk = outer.wildcardHost ? inner.host === outer.host ? inner.wildcardHost : inner.host.endsWith(`.${outer.host}`) : !inner.wildcardHost && inner.host === outer.host;
    if (!hostOk) return false;
    return outer.prefix ? inner.path.startsWith(outer.path) : !inner.prefix && inner.path === outer.path;
  }
  if (inner.kind === 'command' && outer.kind === 'command') {
    if (inner.command !== outer.command) return false;
    if (!outer.moreArgs) return !inner.moreArgs && inner.args.length === outer.args.length && inner.args.every((arg, index) => arg === outer.args[index]);
    return outer.args.every((arg, index) => inner.args[index] === arg);
  }
  return false;
}

/** A connection as the refusal names it: its URL, or its command line. */
export function describeIdentity(identity: ConnectionIdentity): string {
  return identity.transport === 'http' ? identity.url : [identity.command, ...identity.args].join(' ');
}
