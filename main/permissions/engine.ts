import { WardError } from '../base/errors.js';
import { canonicalEntry, describeRule, formatHostPattern, parseHostPattern, parseMcpPattern, shown, type GrantKind, type Rule } from './grants.js';
import { isWithin, joinUnresolved, resolveReal } from './paths.js';

/**
 * One thing an agent wants, in canonical form: a resolved absolute path (read/write),
 * `host:port` (net), a command name or absolute path (run), an env name, or
 * `connection/tool` (mcp).
 */
export interface PermissionRequest {
  readonly kind: GrantKind;
  readonly value: string;
  /**
   * For run: the command line is not a simple command (pipes, `;`, `&&`, substitutions,
   * redirections…). Deny rules on its first word still apply; no allow rule covers it.
   */
  readonly compound?: boolean;
  /**
   * For read/write: the call reaches everything below the path too (Grep, Glob, LS search a
   * folder), so a deny rule anywhere below it denies the call: a deny holds for every tool that
   * could reveal the path or its contents.
   */
  readonly subtree?: boolean;
  /** For run from Bash: the whole command line, which the person must see whole before allowing it. */
  readonly commandLine?: string;
  /** Asked about even when a `--allow-…` flag covers it (a secret-looking variable): why. Stored grants, a person's earlier answers, still settle it. */
  readonly confirm?: string;
}

export type DecisionKind = 'allow' | 'deny' | 'prompt';

export interface Decision {
  readonly decision: DecisionKind;
  /** The rule that decided, when one did. */
  readonly rule?: Rule;
  readonly reason: string;
}

/** What an admin policy contributes to a check (implemented by main/policy). */
export interface RequestGate {
  /** A reason when the policy refuses this request whatever the grants say, else null. */
  refusal(request: PermissionRequest): string | null;
  /** Throws (policy_refused) when the policy does not let anyone grant this rule. */
  assertGrantable(rule: Rule): void;
}

/** Builds a canonical request; paths are resolved the way the OS will open them. */
export function makeRequest(kind: GrantKind, raw: string, baseDir: string): PermissionRequest {
  switch (kind) {
    case 'read':
    case 'write':
      if (raw.includes('\0')) throw new WardError('invalid_grant', `${kind} request ${shown(raw)} contains a NUL byte`);
      return { kind, value: resolveReal(joinUnresolved(baseDir, raw)) };
    case 'net': {
      const pattern = parseHostPattern(raw);
      if (pattern.wildcard) throw new WardError('invalid_grant', `net request ${shown(raw)} may not be a wildcard`);
      return { kind, value: formatHostPattern({ ...pattern, port: pattern.port ?? 443 }) };
    }
    case 'mcp': {
      const pattern = parseMcpPattern(raw);
      if (pattern.tool === '*') throw new WardError('invalid_grant', `mcp request ${shown(raw)} must name one tool`);
      return { kind, value: raw };
    }
    default:
      return { kind, value: canonicalEntry(kind, raw, baseDir) };
  }
}

/** A net request for a URL: http and https only, default ports filled in. */
export function netRequestForUrl(url: string): PermissionRequest {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new WardError('invalid_grant', `net request: ${shown(url)} is not a URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new WardError('invalid_grant', `net request: only http and https URLs can be granted, not ${shown(parsed.protocol)}`);
  }
  const port = parsed.port === '' ? (parsed.protocol === 'https:' ? 443 : 80) : Number(parsed.port);
  return { kind: 'net', value: `${parsed.hostname}:${port}` };
}

function splitHostPort(value: string): { host: string; port: number } {
  const colon = value.lastIndexOf(':');
  const host = value.slice(0, colon);
  return { host: host.startsWith('[') ? host.slice(1, -1) : host, port: Number(value.slice(colon + 1)) };
}

/** How specific `rule` is for `request`, or -1 when it does not apply. Longer match = more specific. */
export function matchRule(rule: Rule, request: PermissionRequest): number {
  if (rule.kind !== request.kind) return -1;
  switch (request.kind) {
    case 'read':
    case 'write':
      return isWithin(rule.value, request.value) ? rule.value.length : -1;
    case 'net': {
      const pattern = parseHostPattern(rule.value);
      const { host, port } = splitHostPort(request.value);
      if (pattern.port !== null && pattern.port !== port) return -1;
      const portBonus = pattern.port === null ? 0 : 1;
      if (!pattern.wildcard) return pattern.host === host ? 2 * (pattern.host.length + 2) + portBonus : -1;
      return host.endsWith(`.${pattern.host}`) ? 2 * pattern.host.length + portBonus : -1;
    }
    case 'run':
      return rule.value === request.value ? rule.value.length : -1;
    case 'env':
      return rule.value === request.value ? rule.value.length : -1;
    case 'mcp': {
      const pattern = parseMcpPattern(rule.value);
      const wanted = parseMcpPattern(request.value);
      if (pattern.connection !== wanted.connection) return -1;
      if (pattern.tool === '*') return 1;
      return pattern.tool === wanted.tool ? 2 : -1;
    }
  }
}

function mostSpecific(rules: readonly Rule[], request: PermissionRequest): Rule | undefined {
  let best: Rule | undefined;
  let bestScore = -1;
  for (const rule of rules) {
    const score = matchRule(rule, request);
    if (score > bestScore) {
      best = rule;
      bestScore = score;
    }
  }
  return best;
}

/**
 * The decision for one request (P1): the admin policy first, then deny rules (any match
 * denies: deny beats allow), then the most specific allow rule; with none, "prompt".
 * Pure: it never asks anyone and never records anything (the gate does both).
 */
export function check(request: PermissionRequest, rules: readonly Rule[], gate?: Pick<RequestGate, 'refusal'>): Decision {
  const refusal = gate?.refusal(request) ?? null;
  if (refusal !== null) return { decision: 'deny', reason: refusal };
  const deny = mostSpecific(
    rules.filter((rule) => rule.effect === 'deny'),
    request,
  );
  if (deny !== undefined) return { decision: 'deny', rule: deny, reason: `denied by ${describeRule(deny)}` };
  if (request.subtree) {
    const below = rules.find((rule) => rule.effect === 'deny' && rule.kind === request.kind && rule.value !== request.value && isWithin(request.value, rule.value));
    if (below !== undefined) return { decision: 'deny', rule: below, reason: `the search covers ${below.value}, which ${describeRule(below)} hides; search a folder that does not contain it` };
  }
  if (request.compound) return { decision: 'prompt', reason: 'not a simple command: no run grant covers pipes, lists, substitutions or redirections' };
  const allow = mostSpecific(
    rules.filter((rule) => rule.effect === 'allow'),
    request,
  );
  if (allow !== undefined && request.confirm !== undefined && allow.source === 'flag') return { decision: 'prompt', reason: request.confirm };
  if (allow !== undefined) return { decision: 'allow', rule: allow, reason: `allowed by ${describeRule(allow)}` };
  return { decision: 'prompt', reason: `no grant covers ${request.kind} ${request.value}` };
}
