/**
 * From the documents each OS store holds to one reading of the policy (P5): every value checked
 * against its key's schema (L1: malformed fails closed, unknown keys are warnings), then the
 * sources merged key by key so the stricter wins and mandatory beats recommended.
 */
import path from 'node:path';
import { describeError } from '../base/errors.js';
import { canonicalEntry, parseHostPattern, shown, type GrantKind } from '../permissions/grants.js';
import { parseConnectionSpec } from '../connections/config.js';
import { matcherWithin, parseConnectionMatcher } from './connection-match.js';
import { POLICY_KEYS, RETIRED_KEYS, policyKey, type PolicyKey, type PolicyLevel } from './schema.js';
import { ruleWithin } from './rules.js';

/** What one store holds: its keys at each level, and how to name a key's place in it. */
export interface PolicyDocument {
  /** The file or registry key, as messages and `ward policy show` name it. */
  readonly source: string;
  readonly mandatory: Readonly<Record<string, unknown>>;
  readonly recommended: Readonly<Record<string, unknown>>;
  /** Where a key lives, e.g. `HKLM\SOFTWARE\Policies\Ward\caps\read`; default `SOURCE: key`. */
  readonly locate?: (key: string, level: PolicyLevel) => string;
  /** The file WARD_POLICY names: the user chose it, so it may only narrow the policy (P6). */
  readonly userNamed?: boolean;
}

/** A store that could not be read as a policy at all (unreadable, writable by others, not a dictionary…). */
export interface BrokenSource {
  readonly source: string;
  readonly problem: string;
}

/** One key's effective value, its level and every source that contributed to it. */
export interface PolicySetting {
  readonly key: string;
  readonly level: PolicyLevel;
  readonly value: unknown;
  readonly sources: readonly string[];
}

export interface PolicyReading {
  /** Every store that holds a policy, in precedence order. */
  readonly sources: readonly string[];
  readonly settings: ReadonlyMap<string, PolicySetting>;
  /** Unknown keys and the like: shown, never fatal. */
  readonly warnings: readonly string[];
  /** Malformed values, unreadable or unsafe stores, disagreeing sources: any one and Ward refuses runs. */
  readonly errors: readonly string[];
}

interface Candidate {
  readonly value: unknown;
  readonly source: string;
}

function where(document: PolicyDocument, key: string, level: PolicyLevel): string {
  return document.locate?.(key, level) ?? `${document.source}: ${level === 'recommended' ? `recommended.${key}` : key}`;
}

/** A key's value in canonical form (paths resolved, hosts lowercased, connections checked); throws on a bad entry. */
function normalize(key: PolicyKey, value: unknown): unknown {
  switch (key.key) {
    case 'caps': {
      const caps: Partial<Record<GrantKind, string[]>> = {};
      for (const [kind, entries] of Object.entries(value as Record<GrantKind, string[]>) as Array<[GrantKind, string[]]>) {
        caps[kind] = entries.map((entry) => {
          if ((kind === 'read' || kind === 'write') && !path.isAbsolute(entry)) throw new Error(`caps.${kind} entry ${shown(entry)} must be an absolute path`);
          try {
            return canonicalEntry(kind, entry, path.parse(process.cwd()).root);
          } catch (error) {
            throw new Error(`bad caps.${kind} entry: ${describeError(error)}`);
          }
        });
      }
      return caps;
    }
    case 'providers':
      return (value as string[]).map((entry) => {
        parseHostPattern(entry);
        return entry.toLowerCase();
      });
    case 'allowedConnections':
    case 'deniedConnections':
      for (const entry of value as string[]) parseConnectionMatcher(entry);
      return value;
    case 'managedConnections':
      return (value as Array<Record<string, unknown>>).map((entry) => {
        const spec = parseConnectionSpec('url' in entry ? { transport: 'http', ...entry } : { transport: 'stdio', ...entry });
        if (spec.transport === 'http') return { name: spec.name, url: spec.url };
        const sandbox = spec.sandbox === null ? {} : { sandbox: { net: [...spec.sandbox.net], ...(spec.sandbox.folder === null ? {} : { folder: spec.sandbox.folder }) } };
        return { name: spec.name, command: spec.command, args: [...spec.args], ...sandbox };
      });
    case 'auditSink':
      return normalizeAuditSink(value as AuditSinkValue);
    default:
      return value;
  }
}

const LOOPBACK_HOST = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

type AuditSinkValue = { syslog: { host: string; port: number; tls?: boolean; caFile?: string } } | { otlp: { endpoint: string; caFile?: string } };

/** TLS unless to this machine; an OTLP endpoint whole and canonical, with nothing secret in it (the policy file is readable by all). */
function normalizeAuditSink(value: AuditSinkValue): AuditSinkValue {
  if ('syslog' in value) {
    const { syslog } = value;
    const tls = syslog.tls ?? true;
    if (!tls && !LOOPBACK_HOST.test(syslog.host)) throw new Error(`"tls": false is allowed only for a loopback host (localhost, 127.0.0.1, [::1]), not ${shown(syslog.host)}: audit events leave this machine only over TLS`);
    return { syslog: { ...syslog, host: syslog.host.toLowerCase(), tls } };
  }
  const { endpoint, caFile } = value.otlp;
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new Error(`the otlp endpoint ${shown(endpoint)} is not a URL`);
  }
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    throw new Error(`the otlp endpoint ${shown(`${url.protocol}//${url.host}${url.pathname}`)} carries a user, password, query or fragment: a policy file is readable by every user of the machine, so it holds no credentials`);
  }
  return { otlp: { endpoint: url.href, ...(caFile === undefined ? {} : { caFile }) } };
}

function firstIssue(error: { issues: ReadonlyArray<{ path: PropertyKey[]; message: string }> }): string {
  const issue = error.issues[0]!;
  const at = issue.path.length > 0 ? ` at ${issue.path.map(String).join('.')}` : '';
  return `${issue.message}${at}`;
}

/** Checks one document; good values become candidates per level and key. */
function collect(document: PolicyDocument, into: Record<PolicyLevel, Map<string, Candidate[]>>, warnings: string[], errors: string[]): void {
  for (const level of ['mandatory', 'recommended'] as const) {
    for (const [name, raw] of Object.entries(document[level])) {
      const place = where(document, name, level);
      const key = policyKey(name);
      if (key === undefined) {
        if (RETIRED_KEYS[name] !== undefined) errors.push(`${place}: ${RETIRED_KEYS[name]}`);
        else warnings.push(`${place}: unknown key, ignored`);
        continue;
      }
      if (key.adminOnly === true && document.userNamed === true) {
        warnings.push(`${place}: ignored: a file WARD_POLICY names may only narrow the policy, and ${name} adds to it; it comes only from the admin's sources`);
        continue;
      }
      if (!key.levels.includes(level)) {
        errors.push(`${place}: ${name} can only be mandatory (a recommended ${name} would be a limit the user could lift)`);
        continue;
      }
      const parsed = key.schema.safeParse(raw);
      if (!parsed.success) {
        errors.push(`${place}: ${firstIssue(parsed.error)}`);
        continue;
      }
      let value: unknown;
      try {
        value = normalize(key, parsed.data);
      } catch (error) {
        errors.push(`${place}: ${describeError(error)}`);
        continue;
      }
      const list = into[level].get(name) ?? [];
      list.push({ value, source: place });
      into[level].set(name, list);
    }
  }
}

type Within = (inner: string, outer: string) => boolean;

const WITHIN: Record<string, Within> = {
  cliVersions: (inner, outer) => inner === outer,
  providers: (inner, outer) => ruleWithin('net', inner, outer),
  models: (inner, outer) => (outer.endsWith('*') ? inner.startsWith(outer.slice(0, -1)) : inner === outer),
  allowedConnections: (inner, outer) => matcherWithin(parseConnectionMatcher(inner), parseConnectionMatcher(outer)),
};

/** The entries of each list that the other list also covers: nothing either one leaves out. */
function bothAllow(within: Within, x: readonly string[], y: readonly string[]): string[] {
  const inner = (from: readonly string[], outer: readonly string[]) => from.filter((entry) => outer.some((other) => within(entry, other)));
  return [...new Set([...inner(x, y), ...inner(y, x)])];
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The mandatory value of a key several sources set; a string is a disagreement that fails closed. */
function mergeMandatory(key: PolicyKey, candidates: readonly Candidate[]): { value: unknown } | { conflict: string } {
  const values = candidates.map((candidate) => candidate.value);
  switch (key.merge) {
    case 'join':
      return { value: [...new Set(values as string[])].join(' and ') };
    case 'same': {
      const other = candidates.find((candidate) => !same(candidate.value, values[0]));
      if (other === undefined) return { value: values[0] };
      return { conflict: `${candidates[0]!.source} sets ${JSON.stringify(values[0])} but ${other.source} sets ${JSON.stringify(other.value)}; the sources must agree on ${key.key}` };
    }
    case 'allowList':
      return { value: (values as string[][]).reduce((a, b) => bothAllow(WITHIN[key.key]!, a, b)) };
    case 'union':
      return { value: [...new Set((values as string[][]).flat())] };
    case 'trueWins':
      return { value: values.some((value) => value === true) };
    case 'falseWins':
      return { value: values.every((value) => value === true) };
    case 'min':
      return { value: Math.min(...(values as number[])) };
    case 'ordered': {
      const order = key.order ?? [];
      return { value: (values as string[]).reduce((a, b) => (order.indexOf(b) > order.indexOf(a) ? b : a)) };
    }
    case 'capsByKind': {
      const caps: Record<string, string[]> = {};
      for (const value of values as Array<Record<GrantKind, string[]>>) {
        for (const [kind, entries] of Object.entries(value) as Array<[GrantKind, string[]]>) {
          const before = caps[kind];
          caps[kind] = before === undefined ? entries : bothAllow((inner, outer) => ruleWithin(kind, inner, outer), before, entries);
        }
      }
      return { value: caps };
    }
    case 'byName': {
      const byName = new Map<string, { entry: Record<string, unknown>; source: string }>();
      for (const candidate of candidates) {
        for (const entry of candidate.value as Array<Record<string, unknown>>) {
          const seen = byName.get(entry.name as string);
          if (seen !== undefined && !same(seen.entry, entry)) return { conflict: `${seen.source} and ${candidate.source} define ${String(entry.name)} differently` };
          byName.set(entry.name as string, { entry, source: candidate.source });
        }
      }
      return { value: [...byName.values()].map((item) => item.entry) };
    }
  }
}

/**
 * Lists that every source filled but that have no entry in common: a legitimate (strict) result,
 * yet one that refuses everything, so `ward policy show` and `ward doctor` say so.
 */
function emptiedLists(key: PolicyKey, candidates: readonly Candidate[], merged: unknown): string[] {
  if (candidates.length < 2) return [];
  const emptied = (name: string, lists: ReadonlyArray<readonly string[]>, result: readonly string[]) =>
    lists.every((list) => list.length > 0) && result.length === 0 ? [`${name}: the sources (${candidates.map((candidate) => candidate.source).join(', ')}) have no entry in common, so nothing is allowed`] : [];
  if (key.merge === 'allowList') return emptied(key.key, candidates.map((candidate) => candidate.value as string[]), merged as string[]);
  if (key.merge !== 'capsByKind') return [];
  const caps = candidates.map((candidate) => candidate.value as Record<string, string[]>);
  return Object.entries(merged as Record<string, string[]>).flatMap(([kind, result]) => {
    const lists = caps.flatMap((cap) => (cap[kind] === undefined ? [] : [cap[kind]]));
    return lists.length < 2 ? [] : emptied(`${key.key}.${kind}`, lists, result);
  });
}

/**
 * One reading of the policy from the documents of every store, in precedence order (machine
 * before user, the OS stores before WARD_POLICY): a recommended value comes from the first
 * source that sets it, and only where no source makes the key mandatory.
 */
export function mergeDocuments(documents: readonly PolicyDocument[], broken: readonly BrokenSource[] = []): PolicyReading {
  const warnings: string[] = [];
  const errors = broken.map((item) => `${item.source}: ${item.problem}`);
  const candidates: Record<PolicyLevel, Map<string, Candidate[]>> = { mandatory: new Map(), recommended: new Map() };
  for (const document of documents) collect(document, candidates, warnings, errors);
  const settings = new Map<string, PolicySetting>();
  for (const key of POLICY_KEYS) {
    const mandatory = candidates.mandatory.get(key.key);
    if (mandatory !== undefined) {
      const merged = mergeMandatory(key, mandatory);
      if ('conflict' in merged) {
        errors.push(`${key.key}: ${merged.conflict}`);
        continue;
      }
      settings.set(key.key, { key: key.key, level: 'mandatory', value: merged.value, sources: mandatory.map((candidate) => candidate.source) });
      warnings.push(...emptiedLists(key, mandatory, merged.value));
      continue;
    }
    const recommended = candidates.recommended.get(key.key)?.[0];
    if (recommended !== undefined) settings.set(key.key, { key: key.key, level: 'recommended', value: recommended.value, sources: [recommended.source] });
  }
  return { sources: [...documents.map((document) => document.source), ...broken.map((item) => item.source)], settings, warnings, errors };
}
