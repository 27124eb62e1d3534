import os from 'node:os';
import path from 'node:path';
import { WardError, describeError } from '../base/errors.js';
import { shown, type GrantKind, type Rule } from '../permissions/grants.js';
import { matchRule, type PermissionRequest, type RequestGate } from '../permissions/engine.js';
import { describeIdentity, matchesConnection, parseConnectionMatcher, type ConnectionIdentity, type ConnectionMatcher } from './connection-match.js';
import { readJsonPolicy, readPlistPolicy, readPolicyFolder, folderProblem, toDocument, type Loaded } from './file-store.js';
import { parsePolicyJson } from './json-text.js';
import { mergeDocuments, type BrokenSource, type PolicyDocument, type PolicyReading, type PolicySetting } from './merge.js';
import { MACHINE_KEY, USER_KEY, registryDocument, runRegQuery, type RegQuery } from './registry-store.js';
import { ruleWithin } from './rules.js';
import type { PolicyLevel } from './schema.js';

export type { ConnectionIdentity, PolicyReading, PolicySetting };

/** The macOS preference domain (the app id) MDM profiles manage. */
export const MAC_DOMAIN = 'dev.ward.desktop';
const MANAGED_PREFERENCES = '/Library/Managed Preferences';

/** An MCP server the organization defines for every namespace (managedConnections). */
export type ManagedConnection =
  | { readonly name: string; readonly url: string }
  | { readonly name: string; readonly command: string; readonly args: readonly string[]; readonly sandbox?: { readonly net: readonly string[]; readonly folder?: string } };

/** The admin policy (P5) as the checks use it: mandatory values, plus the reading it came from. */
export interface AdminPolicy {
  /** Every store that holds a policy, in precedence order. */
  readonly sources: readonly string[];
  /** Shown with every refusal, so people know whom to ask. */
  readonly reason: string;
  readonly namespace: string | null;
  readonly forbid: ReadonlySet<GrantKind>;
  /** Canonical rule values per capped kind; a kind without an entry is not capped. */
  readonly caps: Partial<Record<GrantKind, readonly string[]>>;
  readonly cliVersions: readonly string[] | null;
  readonly providers: readonly string[] | null;
  readonly models: readonly string[] | null;
  readonly allowedConnections: readonly ConnectionMatcher[] | null;
  readonly deniedConnections: readonly ConnectionMatcher[];
  readonly managedConnectionsOnly: boolean;
  readonly managedConnections: readonly ManagedConnection[];
  /** Local (stdio) servers start only inside the OS sandbox (S5). */
  readonly localServersSandboxed: boolean;
  readonly allowFileCredentialStore: boolean;
  readonly requireSignedExports: boolean;
  /** Whether `ward run` may hand its turn to the background service (issue 29). */
  readonly backgroundService: boolean;
  /** Every key set, with its level and sources (`ward policy show`, the desktop's locks). */
  readonly settings: ReadonlyMap<string, PolicySetting>;
  readonly warnings: readonly string[];
  /** The Client ID Metadata Document Ward presents to authorization servers that support it (SEP-991); not a restriction. */
  readonly clientMetadataUrl: string | null;
}

/** Where each OS keeps the admin's policy: places only an administrator can write. */
export interface PolicyLocations {
  /** Linux: /etc/ward/policy.json and its drop-in folder. */
  readonly file?: string;
  readonly dir?: string;
  /** macOS: managed-preferences plists, the machine's first. */
  readonly plists?: readonly string[];
  /** Windows: registry keys, the machine's first, and how to read them. */
  readonly registryKeys?: readonly string[];
  readonly regQuery?: RegQuery;
}

/** The user's name from the OS (never from the environment, which the user sets). */
export function osUserName(): string {
  try {
    return os.userInfo().username;
  } catch {
    return '';
  }
}

export function systemPolicyLocations(platform: NodeJS.Platform = process.platform, user: string = osUserName()): PolicyLocations {
  switch (platform) {
    case 'darwin':
      // Managed preferences only: MDM writes them as root. Never ~/Library/Preferences, which the user writes.
      return { plists: [path.posix.join(MANAGED_PREFERENCES, `${MAC_DOMAIN}.plist`), ...(user === '' ? [] : [path.posix.join(MANAGED_PREFERENCES, user, `${MAC_DOMAIN}.plist`)])] };
    case 'win32':
      return { registryKeys: [MACHINE_KEY, USER_KEY], regQuery: runRegQuery };
    default:
      return { file: '/etc/ward/policy.json', dir: '/etc/ward/policy.d' };
  }
}

/** The stores a location list names, for messages ("no policy at …"). */
export function describeLocations(locations: PolicyLocations): string {
  return [locations.file, locations.dir && `${locations.dir}/*.json`, ...(locations.plists ?? []), ...(locations.registryKeys ?? [])].filter(Boolean).join(', ');
}

function broken(problems: readonly string[]): WardError {
  return new WardError('policy_invalid', `the admin policy is not valid: ${problems.join('; ')}; Ward refuses to run until it is fixed (ask whoever manages this computer)`);
}

/**
 * Every store of this OS, then the file `WARD_POLICY` names, if any. That file can only add
 * restrictions (the merge lets the stricter value win, its recommended values come last, and
 * keys that add, such as managed connections, are ignored in it with a warning), so no
 * environment variable can lift or widen what an admin set; it is how a person restricts
 * themselves, and how tests impose a policy. Problems are collected, not thrown: `ward policy show` lists them.
 */
export function readPolicy(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform, locations: PolicyLocations = systemPolicyLocations(platform)): PolicyReading {
  const documents: PolicyDocument[] = [];
  const problems: BrokenSource[] = [];
  const add = (item: Loaded) => {
    if (item === null) return;
    if ('document' in item) documents.push(item.document);
    else problems.push(item.broken);
  };
  const rules = { rootOwned: true, platform };
  if (locations.file !== undefined && locations.dir !== undefined) readPolicyFolder(locations.file, locations.dir, rules).forEach(add);
  for (const plist of locations.plists ?? []) {
    const problem = folderProblem(path.dirname(plist), rules);
    if (problem !== null) problems.push({ source: path.dirname(plist), problem });
    else add(readPlistPolicy(plist, rules));
  }
  for (const key of locations.registryKeys ?? []) {
    try {
      const output = (locations.regQuery ?? runRegQuery)(key);
      if (output === null) continue;
      const read = registryDocument(output, key);
      documents.push(read.document);
      problems.push(...read.problems);
    } catch (error) {
      problems.push({ source: key, problem: describeError(error) });
    }
  }
  if (env.WARD_POLICY !== undefined && env.WARD_POLICY !== '') {
    const named = readJsonPolicy(path.resolve(env.WARD_POLICY), { rootOwned: false, platform }, true);
    add(named !== null && 'document' in named ? { document: { ...named.document, userNamed: true } } : named);
  }
  return mergeDocuments(documents, problems);
}

/** The admin policy (P5), or null on a personal install; any problem fails closed (L1). */
export function loadPolicy(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform, locations?: PolicyLocations): AdminPolicy | null {
  return compilePolicy(readPolicy(env, platform, locations ?? systemPolicyLocations(platform)));
}

/** A policy from JSON text (tests, and hosts that are handed one). */
export function parsePolicy(text: string, source: string): AdminPolicy {
  let json: unknown;
  try {
    json = parsePolicyJson(text);
  } catch (error) {
    throw broken([`${source}: ${describeError(error)}`]);
  }
  const document = toDocument(source, json, true);
  if (typeof document === 'string') throw broken([`${source}: ${document}`]);
  return compilePolicy(mergeDocuments([document]))!;
}

export function compilePolicy(reading: PolicyReading): AdminPolicy | null {
  if (reading.errors.length > 0) throw broken(reading.errors);
  if (reading.sources.length === 0) return null;
  const value = <T>(key: string, fallback: T): T => (reading.settings.get(key)?.value as T | undefined) ?? fallback;
  const list = (key: string) => value<string[] | null>(key, null);
  return {
    sources: reading.sources,
    reason: value('reason', `the admin policy (${reading.sources.join(', ')})`),
    namespace: value<string | null>('namespace', null),
    forbid: new Set(value<GrantKind[]>('forbid', [])),
    caps: value('caps', {}),
    cliVersions: list('cliVersions'),
    providers: list('providers'),
    models: list('models'),
    allowedConnections: list('allowedConnections')?.map(parseConnectionMatcher) ?? null,
    deniedConnections: value<string[]>('deniedConnections', []).map(parseConnectionMatcher),
    managedConnectionsOnly: value('managedConnectionsOnly', false),
    managedConnections: value<ManagedConnection[]>('managedConnections', []),
    localServersSandboxed: value('localServersSandboxed', false),
    allowFileCredentialStore: value('allowFileCredentialStore', true),
    requireSignedExports: value('requireSignedExports', false),
    backgroundService: value('backgroundService', true),
    clientMetadataUrl: value<string | null>('clientMetadataUrl', null),
    settings: reading.settings,
    warnings: reading.warnings,
  };
}

/** A key's value and level when the policy sets it (keys that may be recommended: defaults the user may change). */
export function policySetting<T>(policy: AdminPolicy | null, key: string): { readonly value: T; readonly level: PolicyLevel; readonly sources: readonly string[] } | null {
  const setting = policy?.settings.get(key);
  return setting === undefined ? null : { value: setting.value as T, level: setting.level, sources: setting.sources };
}

function refused(policy: AdminPolicy, what: string): WardError {
  return new WardError('policy_refused', `${what}: refused by ${policy.reason}`);
}

/** Refuses an allow rule the policy does not permit; deny rules only narrow, so they always pass. */
export function assertRuleAllowed(policy: AdminPolicy | null, rule: Rule): void {
  if (policy === null || rule.effect === 'deny') return;
  if (policy.forbid.has(rule.kind)) throw refused(policy, `${rule.kind} grants are forbidden (${rule.kind} ${rule.value})`);
  const cap = policy.caps[rule.kind];
  if (cap !== undefined && !cap.some((outer) => ruleWithin(rule.kind, rule.value, outer))) {
    throw refused(policy, `${rule.kind} ${rule.value} is beyond the allowed ${rule.kind} cap (${cap.join(', ') || 'nothing'})`);
  }
}

export function assertRulesAllowed(policy: AdminPolicy | null, rules: readonly Rule[]): void {
  for (const rule of rules) assertRuleAllowed(policy, rule);
}

/** Whether a managed connection is this server (same URL, or same command and arguments). */
export function isManagedConnection(managed: ManagedConnection, identity: ConnectionIdentity): boolean {
  if ('url' in managed) return identity.transport === 'http' && identity.url === managed.url;
  return identity.transport === 'stdio' && identity.command === managed.command && identity.args.length === managed.args.length && identity.args.every((arg, index) => arg === managed.args[index]);
}

/** Why the policy refuses this server, or null; by what it is, never by its name (P5). */
function connectionRefusal(policy: AdminPolicy | null, identity: ConnectionIdentity): string | null {
  if (policy === null) return null;
  const denied = policy.deniedConnections.find((matcher) => matchesConnection(matcher, identity));
  if (denied !== undefined) return `it matches deniedConnections entry ${shown(denied.text)}`;
  if (policy.managedConnectionsOnly && !policy.managedConnections.some((managed) => isManagedConnection(managed, identity))) return 'only the managed connections may be used (managedConnectionsOnly)';
  if (policy.allowedConnections !== null && !policy.allowedConnections.some((matcher) => matchesConnection(matcher, identity))) return 'it matches no allowedConnections entry';
  if (policy.localServersSandboxed && identity.transport === 'stdio' && (identity.sandbox ?? null) === null) return LOCAL_SERVER_UNSANDBOXED;
  return null;
}

/** Why a local server without a sandbox profile is refused under localServersSandboxed. */
export const LOCAL_SERVER_UNSANDBOXED = 'local servers run only inside the OS sandbox (localServersSandboxed): add it to run there ("ward connections add NAME --command … --sandbox [--sandbox-net=HOST,…]", or "Run it in the OS sandbox" on the Connections page)';

/** Refuses a connection the policy does not allow; `name` is only for the message. */
export function assertConnectionAllowed(policy: AdminPolicy | null, name: string, identity: ConnectionIdentity): void {
  const why = connectionRefusal(policy, identity);
  if (why !== null) throw refused(policy!, `connection ${shown(name)} (${shown(describeIdentity(identity))}) is not allowed: ${why}`);
}

/** Whether runs may use this model (`models`: exact names, or prefixes ending in "*"). */
export function modelAllowed(policy: AdminPolicy | null, model: string): boolean {
  return policy?.models == null || policy.models.some((entry) => (entry.endsWith('*') ? model.startsWith(entry.slice(0, -1)) : model === entry));
}

export function assertModelAllowed(policy: AdminPolicy | null, model: string): void {
  if (!modelAllowed(policy, model)) throw refused(policy!, `model ${shown(model)} is not allowed (allowed: ${policy!.models!.join(', ') || 'none'})`);
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
  if (policy?.cliVersions != null && !policy.cliVersions.includes(version)) {
    throw refused(policy, `Claude CLI version ${shown(version)} is not allowed (the policy allows ${policy.cliVersions.join(', ') || 'none'}; this Ward carries ${version}: install a Ward release that carries an allowed version)`);
  }
}

/** Why the policy's cliVersions refuses every run of this Ward, or null: what `ward doctor` and `ward policy show` report. */
export function cliVersionProblem(reading: PolicyReading, pinnedCliVersion: string): string | null {
  const allowed = reading.settings.get('cliVersions')?.value as string[] | undefined;
  if (allowed === undefined || allowed.includes(pinnedCliVersion)) return null;
  return `cliVersions allows ${allowed.join(', ') || 'no version'}, but this Ward carries Claude CLI ${pinnedCliVersion}: every run is refused; install a Ward release that carries an allowed version`;
}

/** E2: under `requireSignedExports` an export must be a signed bundle; a transcript carries no signature. */
export function assertExportAllowed(policy: AdminPolicy | null, format: string): void {
  if (policy?.requireSignedExports === true && format !== 'bundle') throw refused(policy, `an export as ${format} carries no signature, and every export must be signed; export a bundle`);
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
    return null;
  }
}
