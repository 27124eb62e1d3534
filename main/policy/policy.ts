import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { WardError, describeError } from '../base/errors.js';
import { GRANT_KINDS, canonicalEntry, parseHostPattern, parseMcpPattern, shown, type GrantKind, type Rule } from '../permissions/grants.js';
import { matchRule, type PermissionRequest, type RequestGate } from '../permissions/engine.js';
import { isWithin } from '../permissions/paths.js';

/** A policy bigger than this is not a policy someone wrote by hand: refuse it. */
const MAX_POLICY_BYTES = 1024 * 1024;

/**
 * The admin policy (P5), a JSON file the user cannot edit:
 * {
 *   "version": 1,
 *   "reason": "Set by Example Corp IT (it@example.com)",
 *   "namespace": "work",                          // fixed namespace
 *   "forbid": ["run"],                            // kinds nobody may grant
 *   "caps": { "read": ["/home/alice/src"], "net": ["*.example.com"], "mcp": ["github/*"] },
 *   "connections": ["github"],                    // MCP connections that may be used
 *   "providers": ["api.anthropic.com"],           // model provider base-URL hosts
 *   "cliVersions": ["2.1.328"],                   // pinned CLI versions allowed
 *   "signedExports": true                         // every export is a signed bundle (no transcripts)
 * }
 */
const PolicySchema = z
  .object({
    version: z.literal(1),
    reason: z.string().min(1).max(500).optional(),
    namespace: z.string().optional(),
    forbid: z.array(z.enum(GRANT_KINDS)).optional(),
    caps: z.partialRecord(z.enum(GRANT_KINDS), z.array(z.string().min(1).max(4096)).max(1000)).optional(),
    connections: z.array(z.string().min(1).max(128)).max(1000).optional(),
    providers: z.array(z.string().min(1).max(300)).max(1000).optional(),
    cliVersions: z.array(z.string().regex(/^\d+\.\d+\.\d+$/)).max(100).optional(),
    signedExports: z.boolean().optional(),
  })
  .strict();

export interface AdminPolicy {
  readonly file: string;
  /** Shown with every refusal, so people know whom to ask. */
  readonly reason: string;
  readonly namespace: string | null;
  readonly forbid: ReadonlySet<GrantKind>;
  /** Canonical rule values per capped kind; a kind without an entry is not capped. */
  readonly caps: Partial<Record<GrantKind, readonly string[]>>;
  readonly connections: readonly string[] | null;
  readonly providers: readonly string[] | null;
  readonly cliVersions: readonly string[] | null;
  /** Exports must carry a signature: only bundles, never unsigned transcripts (E2). */
  readonly signedExports: boolean;
}

/** Where the admin's policy lives on each OS: a place only an administrator can write. */
export function systemPolicyPath(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  switch (platform) {
    case 'darwin':
      return '/Library/Application Support/Ward/policy.json';
    case 'win32':
      return path.win32.join(env.ProgramData ?? 'C:\\ProgramData', 'Ward', 'policy.json');
    default:
      return '/etc/ward/policy.json';
  }
}

function broken(file: string, why: string, cause?: unknown): WardError {
  return new WardError('policy_invalid', `the admin policy ${file} ${why}; Ward refuses to run until it is fixed (ask whoever manages this computer)`, { cause });
}

/** Parses policy text; every problem is a policy_invalid error naming the file and the field. */
export function parsePolicy(text: string, file: string): AdminPolicy {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw broken(file, `is not valid JSON (${describeError(error)})`, error);
  }
  const parsed = PolicySchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw broken(file, `is malformed at ${issue.path.join('.') || '(top level)'}: ${issue.message}`);
  }
  const data = parsed.data;
  const caps: Partial<Record<GrantKind, readonly string[]>> = {};
  for (const [kind, entries] of Object.entries(data.caps ?? {}) as Array<[GrantKind, string[]]>) {
    caps[kind] = entries.map((entry) => {
      if ((kind === 'read' || kind === 'write') && !path.isAbsolute(entry)) throw broken(file, `caps.${kind} entry ${shown(entry)} must be an absolute path`);
      try {
        return canonicalEntry(kind, entry, path.parse(process.cwd()).root);
      } catch (error) {
        throw broken(file, `has a bad caps.${kind} entry: ${describeError(error)}`, error);
      }
    });
  }
  const providers = data.providers?.map((entry) => {
    try {
      parseHostPattern(entry);
      return entry.toLowerCase();
    } catch (error) {
      throw broken(file, `has a bad providers entry: ${describeError(error)}`, error);
    }
  });
  return {
    file,
    reason: data.reason ?? `the admin policy ${file}`,
    namespace: data.namespace ?? null,
    forbid: new Set(data.forbid ?? []),
    caps,
    connections: data.connections ?? null,
    providers: providers ?? null,
    cliVersions: data.cliVersions ?? null,
    signedExports: data.signedExports ?? false,
  };
}

/**
 * The admin policy (P5): the file at the system location (none there: a personal install, no
 * policy), narrowed by the file `WARD_POLICY` names, if any. That second file can only add
 * restrictions (the two are merged so the stricter wins), so no environment variable can lift
 * what an admin set; it is how a person restricts themselves, and how tests impose a policy.
 * A file that exists but cannot be read, is writable by others or is malformed fails closed.
 */
export function loadPolicy(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform, systemFile: string = systemPolicyPath(env, platform)): AdminPolicy | null {
  const system = readPolicyFile(systemFile, { platform, mustExist: false, rootOwned: true });
  const extra = env.WARD_POLICY === undefined || env.WARD_POLICY === '' ? null : readPolicyFile(path.resolve(env.WARD_POLICY), { platform, mustExist: true, rootOwned: false });
  return mergePolicies(system, extra);
}

function readPolicyFile(file: string, options: { platform: NodeJS.Platform; mustExist: boolean; rootOwned: boolean }): AdminPolicy | null {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT' && !options.mustExist) return null;
    throw broken(file, `cannot be read (${describeError(error)})`, error);
  }
  if (!stat.isFile()) throw broken(file, 'is not a regular file');
  if (stat.size > MAX_POLICY_BYTES) throw broken(file, `is larger than ${MAX_POLICY_BYTES} bytes`);
  if (options.platform !== 'win32') {
    // The user must not be able to loosen what the admin set.
    if ((stat.mode & 0o022) !== 0) throw broken(file, `is writable by group or others (mode ${(stat.mode & 0o777).toString(8)})`);
    if (options.rootOwned && stat.uid !== 0) throw broken(file, `is not owned by root (uid ${stat.uid})`);
  }
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw broken(file, `cannot be read (${describeError(error)})`, error);
  }
  return parsePolicy(text, file);
}

/**
 * Two policies as one, the stricter winning everywhere: forbidden kinds add up; caps, allowed
 * connections, providers and CLI versions keep only what both allow; two fixed namespaces must
 * agree (else fail closed).
 */
export function mergePolicies(a: AdminPolicy | null, b: AdminPolicy | null): AdminPolicy | null {
  if (a === null || b === null) return a ?? b;
  if (a.namespace !== null && b.namespace !== null && a.namespace !== b.namespace) {
    throw broken(`${a.file} and ${b.file}`, `fix different namespaces (${a.namespace}, ${b.namespace})`);
  }
  const caps: Partial<Record<GrantKind, readonly string[]>> = { ...a.caps };
  for (const [kind, entries] of Object.entries(b.caps) as Array<[GrantKind, readonly string[]]>) {
    const other = caps[kind];
    caps[kind] = other === undefined ? entries : bothAllow(kind, other, entries);
  }
  const both = (x: readonly string[] | null, y: readonly string[] | null) => (x === null ? y : y === null ? x : x.filter((entry) => y.includes(entry)));
  return {
    file: `${a.file} + ${b.file}`,
    reason: `${a.reason} and ${b.reason}`,
    namespace: a.namespace ?? b.namespace,
    forbid: new Set([...a.forbid, ...b.forbid]),
    caps,
    connections: both(a.connections, b.connections),
    providers: a.providers === null ? b.providers : b.providers === null ? a.providers : bothAllow('net', a.providers, b.providers),
    cliVersions: both(a.cliVersions, b.cliVersions),
    signedExports: a.signedExports || b.signedExports,
  };
}

/** The entries of each list that the other list also covers: nothing either one leaves out. */
function bothAllow(kind: GrantKind, x: readonly string[], y: readonly string[]): string[] {
  const inner = (from: readonly string[], within: readonly string[]) => from.filter((entry) => within.some((outer) => ruleWithin(kind, entry, outer)));
  return [...new Set([...inner(x, y), ...inner(y, x)])];
}

function refused(policy: AdminPolicy, what: string): WardError {
  return new WardError('policy_refused', `${what}: refused by ${policy.reason}`);
}

/** True when every request `inner` covers is also covered by `outer` (same kind, canonical values). */
export function ruleWithin(kind: GrantKind, inner: string, outer: string): boolean {
  switch (kind) {
    case 'read':
    case 'write':
      return isWithin(outer, inner);
    case 'net': {
      const a = parseHostPattern(inner);
      const b = parseHostPattern(outer);
      if (b.port !== null && a.port !== b.port) return false;
      if (!b.wildcard) return !a.wildcard && a.host === b.host;
      return a.host.endsWith(`.${b.host}`);
    }
    case 'run':
    case 'env':
      return inner === outer;
    case 'mcp': {
      const a = parseMcpPattern(inner);
      const b = parseMcpPattern(outer);
      return a.connection === b.connection && (b.tool === '*' || a.tool === b.tool);
    }
  }
}

/** Refuses an allow rule the policy does not permit; deny rules only narrow, so they always pass. */
export function assertRuleAllowed(policy: AdminPolicy | null, rule: Rule): void {
  if (policy === null || rule.effect === 'deny') return;
  if (policy.forbid.has(rule.kind)) throw refused(policy, `${rule.kind} grants are forbidden (${rule.kind} ${rule.value})`);
  const cap = policy.caps[rule.kind];
  if (cap !== undefined && !cap.some((outer) => ruleWithin(rule.kind, rule.value, outer))) {
    throw refused(policy, `${rule.kind} ${rule.value} is beyond the allowed ${rule.kind} cap (${cap.join(', ') || 'nothing'})`);
  }
  if (rule.kind === 'mcp' && policy.connections !== null) {
    const { connection } = parseMcpPattern(rule.value);
    if (!policy.connections.includes(connection)) throw refused(policy, `connection ${connection} is not allowed`);
  }
}

export function assertRulesAllowed(policy: AdminPolicy | null, rules: readonly Rule[]): void {
  for (const rule of rules) assertRuleAllowed(policy, rule);
}

export function assertConnectionAllowed(policy: AdminPolicy | null, connection: string): void {
  if (policy?.connections != null && !policy.connections.includes(connection)) throw refused(policy, `connection ${shown(connection)} is not allowed`);
}

/** The model provider's base URL host must be in `providers` when the policy lists them. */
export function assertProviderAllowed(policy: AdminPolicy | null, baseUrl: string): void {
  if (policy?.providers == null) return;
  let parsed: URL;
  try {
    parsed = new URL(baseUrl);
  } catch {
    throw refused(policy, `model provider ${shown(baseUrl)} is not a URL`);
  }
  const port = parsed.port === '' ? (parsed.protocol === 'http:' ? 80 : 443) : Number(parsed.port);
  const request: PermissionRequest = { kind: 'net', value: `${parsed.hostname}:${port}` };
  const host = parsed.host;
  const allowed = policy.providers.some((entry) => matchRule({ effect: 'allow', kind: 'net', value: entry, source: 'policy' }, request) >= 0);
  if (!allowed) throw refused(policy, `model provider ${host} is not allowed`);
}

export function assertCliVersionAllowed(policy: AdminPolicy | null, version: string): void {
  if (policy?.cliVersions != null && !policy.cliVersions.includes(version)) throw refused(policy, `Claude CLI version ${shown(version)} is not allowed`);
}

/** E2: under `signedExports` an export must be a signed bundle; a transcript carries no signature. */
export function assertExportAllowed(policy: AdminPolicy | null, format: string): void {
  if (policy?.signedExports === true && format !== 'bundle') throw refused(policy, `a ${format} export carries no signature, and every export must be signed; export a bundle`);
}

/** The policy as the permission engine sees it: requests outside caps are denied, never prompted; null without a policy. */
export function policyGate(policy: AdminPolicy | null): PolicyGate | null {
  return policy === null ? null : new PolicyGate(policy);
}

/** The policy as the permission engine sees it: requests outside caps are denied, never prompted. */
export class PolicyGate implements RequestGate {
  constructor(private readonly policy: AdminPolicy) {}

  assertGrantable(rule: Rule): void {
    assertRuleAllowed(this.policy, rule);
  }

  refusal(request: PermissionRequest): string | null {
    const policy = this.policy;
    if (policy.forbid.has(request.kind)) return `${request.kind} is forbidden by ${policy.reason}`;
    const cap = policy.caps[request.kind];
    if (cap !== undefined && !cap.some((value) => matchRule({ effect: 'allow', kind: request.kind, value, source: 'policy' }, request) >= 0)) {
      return `${request.kind} ${request.value} is beyond the cap set by ${policy.reason}`;
    }
    if (request.kind === 'mcp' && policy.connections !== null) {
      const { connection } = parseMcpPattern(request.value);
      if (!policy.connections.includes(connection)) return `connection ${connection} is not allowed by ${policy.reason}`;
    }
    return null;
  }
}
