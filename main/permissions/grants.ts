import path from 'node:path';
import { WardError, describeError } from '../base/errors.js';
import { reservedEnvReason } from './env-grants.js';
import { joinUnresolved, resolveReal } from './paths.js';
import { formatHostPattern, parseHostPattern as parseHostPatternOr, sandboxRefusal, shown, type HostPattern } from '../base/host-pattern.js';

export { formatHostPattern, shown, type HostPattern } from '../base/host-pattern.js';

/** P1: the closed set of permission kinds. */
export const GRANT_KINDS = ['read', 'write', 'net', 'run', 'env', 'mcp'] as const;
export type GrantKind = (typeof GRANT_KINDS)[number];
export type Effect = 'allow' | 'deny';

/** Where a rule came from; shown in audit records and `ward permissions`. */
export type RuleSource = 'flag' | 'agent' | 'namespace' | 'conversation' | 'policy';

/**
 * One allow or deny rule. `value` is canonical: an absolute resolved path, `host[:port]` with
 * an optional `*.` prefix, a command name or absolute path, an env name, or `connection/tool`
 * with `*` for any tool of a connection.
 */
export interface Rule {
  readonly effect: Effect;
  readonly kind: GrantKind;
  readonly value: string;
  readonly source: RuleSource;
  /** The stored grant's id, for rules that come from the grant store. */
  readonly grantId?: string;
}

export function isGrantKind(value: string): value is GrantKind {
  return (GRANT_KINDS as readonly string[]).includes(value);
}

export function describeRule(rule: Rule): string {
  return `${rule.effect} ${rule.kind} ${rule.value} (${rule.source}${rule.grantId ? ` ${rule.grantId.slice(0, 8)}` : ''})`;
}

const MAX_ENTRY_LENGTH = 4096;
const COMMAND_NAME = /^[A-Za-z0-9_+][A-Za-z0-9._+-]*$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const MCP_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;


function invalid(kind: GrantKind, entry: string, why: string): WardError {
  return new WardError('invalid_grant', `${kind} entry ${shown(entry)}: ${why}`);
}

/** A path entry made absolute against `baseDir` and resolved through symlinks. */
export function canonicalPath(kind: GrantKind, entry: string, baseDir: string): string {
  const absolute = joinUnresolved(baseDir, entry);
  try {
    return resolveReal(absolute);
  } catch (error) {
    throw new WardError('invalid_grant', `${kind} entry ${shown(entry)}: cannot resolve the path (${describeError(error)})`, { cause: error });
  }
}

/** Parses `host`, `host:port`, `*.domain[:port]`, `[v6]`, `[v6]:port`; refuses schemes and paths. */
export function parseHostPattern(entry: string, kind: GrantKind = 'net'): HostPattern {
  return parseHostPatternOr(entry, (why) => invalid(kind, entry, why));
}

export interface McpPattern {
  readonly connection: string;
  /** `*` for every tool of the connection. */
  readonly tool: string;
}

export function parseMcpPattern(entry: string): McpPattern {
  const slash = entry.indexOf('/');
  if (slash < 0) throw invalid('mcp', entry, 'write connection/tool or connection/*');
  const connection = entry.slice(0, slash);
  const tool = entry.slice(slash + 1);
  if (!MCP_NAME.test(connection)) throw invalid('mcp', entry, `invalid connection name ${shown(connection)}`);
  if (tool !== '*' && !MCP_NAME.test(tool)) throw invalid('mcp', entry, `invalid tool name ${shown(tool)} (a name, or * for every tool)`);
  return { connection, tool };
}

/**
 * Turns one user-written entry into the canonical value a Rule holds.
 * Every refusal is a WardError('invalid_grant') naming the entry.
 */
export function canonicalEntry(kind: GrantKind, entry: string, baseDir: string): string {
  if (entry === '') throw new WardError('invalid_grant', `${kind}: empty entry`);
  if (entry.length > MAX_ENTRY_LENGTH) throw invalid(kind, entry, `longer than ${MAX_ENTRY_LENGTH} characters`);
  if (/[\0-\x1f\x7f]/.test(entry)) throw invalid(kind, entry, 'contains a NUL or control character');
  switch (kind) {
    case 'read':
    case 'write':
      return canonicalPath(kind, entry, baseDir);
    case 'net': {
      const pattern = parseHostPattern(entry);
      // Checked when a grant is written, not when a stored one is read back: a name no URL can
      // carry (bad punycode like "xn--a", "0x7f.1" read as an IPv4 address) would never match.
      if (!pattern.host.includes(':') && urlHostname(pattern.host) !== pattern.host) {
        throw invalid(kind, entry, `${shown(pattern.host)} is not a host name a URL can reach (check "xn--" labels and numbers)`);
      }
      return formatHostPattern(pattern);
    }
    case 'run': {
      if (path.isAbsolute(entry)) {
        if (entry.split(/[\\/]/).some((segment) => segment === '..' || segment === '.')) throw invalid(kind, entry, 'an absolute command path may not contain "." or ".." segments');
        return path.normalize(entry);
      }
      if (entry.includes('/') || entry.includes('\\')) throw invalid(kind, entry, 'give a command name (git) or an absolute path (/usr/bin/git), not a relative path');
      if (!COMMAND_NAME.test(entry)) throw invalid(kind, entry, 'a command name has letters, digits and "._+-" only');
      return entry;
    }
    case 'env': {
      if (!ENV_NAME.test(entry)) throw invalid(kind, entry, 'an environment variable name has letters, digits and "_" and does not start with a digit');
      const reserved = reservedEnvReason(entry);
      if (reserved !== null) throw invalid(kind, entry, reserved);
      return entry;
    }
    case 'mcp': {
      const pattern = parseMcpPattern(entry);
      return `${pattern.connection}/${pattern.tool}`;
    }
  }
}

/** An allowed host goes into the sandbox proxy's list as it is: one the proxy would not take is refused here, before any run has it. */
export function assertSandboxCanAllow(effect: Effect, kind: GrantKind, value: string): void {
  if (effect !== 'allow' || kind !== 'net') return;
  const refusal = sandboxRefusal(value);
  if (refusal !== null) throw invalid(kind, value, refusal);
}

/** Splits a flag's comma list; an empty entry (`a,,b`, a trailing comma) is refused by position. */
function splitEntries(flag: string, list: string): string[] {
  const entries = list.split(',');
  entries.forEach((entry, index) => {
    if (entry.trim() === '') throw new WardError('invalid_grant', `${flag}: entry ${index + 1} of ${shown(list)} is empty`);
    if (entry !== entry.trim()) throw new WardError('invalid_grant', `${flag}: entry ${shown(entry)} has leading or trailing spaces`);
  });
  return entries;
}

const FLAG = /^--(allow|deny)-([a-z]+)(?:=([\s\S]*))?$/;

/** True for tokens the grant parser owns: `--allow-*`, `--deny-*`, `-A`. */
export function isPermissionFlag(token: string): boolean {
  return token === '-A' || token.startsWith('--allow-') || token.startsWith('--deny-');
}

/**
 * Parses Deno-style permission flags (`--allow-read=./src,./docs`, `--deny-write=./src/secrets`,
 * `--allow-net=api.github.com`, `--allow-run=git,npm`, `--allow-env=HOME`,
 * `--allow-mcp=github/list_issues`). Relative paths resolve against `baseDir`.
 * `--allow-all` and `-A` are refused: agents never get everything.
 */
export function parsePermissionFlags(tokens: readonly string[], baseDir: string, source: RuleSource = 'flag'): Rule[] {
  const rules: Rule[] = [];
  for (const token of tokens) {
    if (token === '-A' || token === '--allow-all' || token.startsWith('--allow-all=')) {
      throw new WardError('invalid_grant', `${token.split('=')[0]}: Ward never grants everything to an agent; grant each kind with --allow-read=… and friends`);
    }
    const match = FLAG.exec(token);
    if (match === null) throw new WardError('invalid_grant', `${shown(token)} is not a permission flag (use --allow-KIND=LIST or --deny-KIND=LIST)`);
    const [, effect, kind, list] = match as unknown as [string, Effect, string, string | undefined];
    rules.push(...parseGrantList(effect, kind, list ?? '', baseDir, source));
  }
  return rules;
}

/**
 * One `--EFFECT-KIND=LIST` grant (a flag, or the same fields from a form): every entry is
 * validated and made canonical; relative paths resolve against `baseDir`. Errors name the grant
 * by `label`: the flag by default, the form's own words for a form ("Deny net").
 */
export function parseGrantList(effect: Effect, kind: string, list: string, baseDir: string, source: RuleSource = 'flag', label?: string): Rule[] {
  if (!path.isAbsolute(baseDir)) throw new WardError('internal', 'parseGrantList needs an absolute base directory');
  const flag = label ?? `--${effect}-${kind}`;
  if (!isGrantKind(kind)) throw new WardError('invalid_grant', `${flag}: unknown permission kind ${shown(kind)}; kinds are ${GRANT_KINDS.join(', ')}`);
  if (list === '') throw new WardError('invalid_grant', `${flag} needs a list (${flag}=ENTRY,ENTRY); Ward has no allow-all for a kind`);
  return splitEntries(flag, list).map((entry) => {
    try {
      const value = canonicalEntry(kind, entry, baseDir);
      assertSandboxCanAllow(effect, kind, value);
      return { effect, kind, value, source };
    } catch (error) {
      if (error instanceof WardError) throw new WardError('invalid_grant', `${flag}: ${error.message}`, { cause: error });
      throw error;
    }
  });
}

/** Separates permission flags from other arguments (for commands like `ward run`). */
export function splitPermissionArgs(args: readonly string[]): { permissionArgs: string[]; otherArgs: string[] } {
  const permissionArgs: string[] = [];
  const otherArgs: string[] = [];
  let afterSeparator = false;
  for (const arg of args) {
    if (afterSeparator) otherArgs.push(arg);
    else if (arg === '--') {
      afterSeparator = true;
      otherArgs.push(arg);
    } else if (isPermissionFlag(arg)) permissionArgs.push(arg);
    else otherArgs.push(arg);
  }
  return { permissionArgs, otherArgs };
}

function urlHostname(host: string): string | null {
  try {
    return new URL(`http://${host}/`).hostname;
  } catch {
    return null;
  }
}
