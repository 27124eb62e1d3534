/**
 * Host patterns as `--allow-net` grants and a sandboxed server's `--sandbox-net` take them, in
 * the subset of the sandbox runtime's grammar Ward writes: `host`, `host:port`, `*.domain[:port]`,
 * `[v6]`, `[v6]:port`. No allow-all, no schemes or paths. Each caller words a refusal for its setting.
 */
import net from 'node:net';
import { ALLOWED_DOMAIN_ENTRY_MESSAGE, isValidAllowedDomainEntry } from '@anthropic-ai/sandbox-runtime/dist/sandbox/domain-pattern.js';

const HOST_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** A shown form of user input for error messages: quoted, bounded, escapes control characters. */
export function shown(entry: string): string {
  return JSON.stringify(entry.length > 80 ? `${entry.slice(0, 79)}…` : entry);
}

export interface HostPattern {
  /** Lowercase host, without brackets for IPv6, without the `*.` of a wildcard. */
  readonly host: string;
  readonly wildcard: boolean;
  readonly port: number | null;
}

function parsePort(text: string, fail: (why: string) => Error): number {
  if (!/^\d{1,5}$/.test(text)) throw fail(`port ${shown(text)} is not a number`);
  const port = Number(text);
  if (port < 1 || port > 65_535) throw fail(`port ${port} is outside 1-65535`);
  return port;
}

/** Parses `host`, `host:port`, `*.domain[:port]`, `[v6]`, `[v6]:port`; refuses schemes and paths. */
export function parseHostPattern(entry: string, fail: (why: string) => Error): HostPattern {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(entry)) throw fail('give a host, not a URL (no scheme)');
  if (/[/?#@%\s]/.test(entry)) throw fail('a host may not contain "/", "?", "#", "@", "%" or spaces');
  let hostText = entry;
  let port: number | null = null;
  if (entry.startsWith('[')) {
    const close = entry.indexOf(']');
    if (close < 0) throw fail('unclosed "[" in an IPv6 address');
    hostText = entry.slice(1, close);
    const rest = entry.slice(close + 1);
    if (rest !== '') {
      if (!rest.startsWith(':')) throw fail('expected ":port" after "]"');
      port = parsePort(rest.slice(1), fail);
    }
    if (!net.isIPv6(hostText)) throw fail(`${shown(hostText)} is not an IPv6 address`);
    return { host: new URL(`http://[${hostText}]/`).hostname.slice(1, -1), wildcard: false, port };
  }
  const colon = entry.lastIndexOf(':');
  if (colon >= 0) {
    if (entry.indexOf(':') !== colon) throw fail('write IPv6 addresses in brackets, like [::1]:8080');
    hostText = entry.slice(0, colon);
    port = parsePort(entry.slice(colon + 1), fail);
  }
  hostText = hostText.toLowerCase();
  let wildcard = false;
  if (hostText.startsWith('*.')) {
    wildcard = true;
    hostText = hostText.slice(2);
  }
  if (hostText === '' || hostText === '*') throw fail('a host is required (Ward has no allow-all)');
  if (hostText.length > 253) throw fail('host name longer than 253 characters');
  const labels = hostText.split('.');
  for (const label of labels) {
    if (!HOST_LABEL.test(label)) throw fail(`invalid host label ${shown(label)} (letters, digits and "-"; "*." only as a prefix)`);
  }
  if (labels.every((label) => /^\d+$/.test(label))) {
    if (wildcard) throw fail('a wildcard needs a domain, not an IP address');
    if (!net.isIPv4(hostText)) throw fail(`${shown(hostText)} is not a valid IPv4 address`);
  }
  if (wildcard && labels.length < 2) throw fail('a wildcard must name a domain with at least two labels, like *.example.com');
  return { host: hostText, wildcard, port };
}

export function formatHostPattern(pattern: HostPattern): string {
  const host = pattern.host.includes(':') ? `[${pattern.host}]` : pattern.host;
  return `${pattern.wildcard ? '*.' : ''}${host}${pattern.port === null ? '' : `:${pattern.port}`}`;
}

/**
 * Why the sandbox's proxy would refuse `pattern` (canonical, as formatHostPattern writes it) in a
 * run's or a server's allowed hosts, or null: its own check, so a grant it cannot take is refused
 * when it is written, not when a run starts with it. Its one rule beyond Ward's: a host name needs
 * a dot (`localhost` aside).
 */
export function sandboxRefusal(pattern: string): string | null {
  if (isValidAllowedDomainEntry(pattern)) return null;
  const host = pattern.replace(/:\d+$/, '');
  return /^[^.:[\]*]+$/.test(host)
    ? `the sandbox's proxy takes a host name only with a dot in it (localhost aside): write ${shown(host)} as its full name (like ${host}.internal) or as its IP address`
    : `the sandbox's proxy would not take it: ${ALLOWED_DOMAIN_ENTRY_MESSAGE}`;
}
