/**
 * Every admin policy key (P5), once: its type (a zod schema), the levels it may be set at, how two
 * sources combine (the stricter wins), its default and what it means. The readers of each OS
 * store, `ward policy show`, the desktop's locks and the generated templates (JSON Schema,
 * ADMX/ADML, .mobileconfig: scripts/policy-templates.ts) all come from this list.
 */
import { z } from 'zod';
import { GRANT_KINDS, type GrantKind } from '../permissions/grants.js';

/** Mandatory: the user cannot change it. Recommended: a default the user may change. */
export type PolicyLevel = 'mandatory' | 'recommended';

/**
 * How one key's values from several sources become one, so that no source can loosen another:
 * - join: texts joined (the reason shown with refusals);
 * - same: every source must give the same value, else the policy fails closed;
 * - allowList: only what every source allows (`within` decides containment);
 * - union: everything any source lists (forbidden kinds, denied connections);
 * - trueWins / falseWins: the restrictive boolean;
 * - min: the smallest number;
 * - ordered: the latest in `order` (the strictest);
 * - capsByKind: allowList per grant kind;
 * - byName: definitions added up by name; one name defined two ways fails closed.
 */
export type MergeRule = 'join' | 'same' | 'allowList' | 'union' | 'trueWins' | 'falseWins' | 'min' | 'ordered' | 'capsByKind' | 'byName';

export interface PolicyKey {
  readonly key: string;
  /** A short title (the ADMX policy's display name, the desktop's label). */
  readonly title: string;
  readonly description: string;
  readonly schema: z.ZodType;
  readonly levels: readonly PolicyLevel[];
  readonly merge: MergeRule;
  /** For `ordered`: from least to most strict. */
  readonly order?: readonly string[];
  /** What applies when no source sets the key. */
  readonly whenUnset: string;
  /** A value for the generated examples. */
  readonly example: unknown;
  /** It adds (rather than narrows): read only from the admin's stores, ignored with a warning in the file WARD_POLICY names. */
  readonly adminOnly?: true;
}

const MANDATORY: readonly PolicyLevel[] = ['mandatory'];
const EITHER: readonly PolicyLevel[] = ['mandatory', 'recommended'];

const NAME = /^[a-z0-9-]{1,32}$/;
const MODEL_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@\-[\]]{0,127}\*?$/;

/**
 * The shapes Ward's own parsers accept, also written as patterns so the generated JSON Schema
 * refuses what Ward refuses (the parsers still check the rest, e.g. an IPv4 address's range).
 */
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const PORT = '(?::[0-9]{1,5})?';
/** host, host:port, *.domain[:port] (two labels at least), [v6][:port]; no scheme, path or allow-all. */
const HOST_PATTERN = new RegExp(`^(?:(?:\\*\\.${LABEL}(?:\\.${LABEL})+|${LABEL}(?:\\.${LABEL})*)|\\[[0-9A-Fa-f:.]+\\])${PORT}$`);
const hostEntry = z.string().max(300).regex(HOST_PATTERN, 'a host is host, host:port or *.domain (no scheme, path or allow-all)');
/** Absolute on Linux and macOS (/…) or Windows (C:\… or \\server\…); each OS then checks its own form. */
const absolutePath = z.string().max(4096).regex(/^(?:\/|[A-Za-z]:[\\/]|\\\\)/, 'must be an absolute path');
const MCP_NAME = '[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}';
/** https anywhere, plain http only to this machine (the one URL policy of server URLs). */
const SERVER_URL = /^(?:https:\/\/|http:\/\/(?:localhost|127\.0\.0\.1|\[::1\])(?::[0-9]{1,5})?(?:[/?]|$))/i;
/** A host name or IP address without port (the sink's port is its own field). */
const SINK_HOST = new RegExp(`^(?:${LABEL}(?:\\.${LABEL})*|\\[[0-9A-Fa-f:.]+\\])$`);
const OTLP_NO_HEADERS = '"headers" is not supported: a policy file is readable by every user of the machine, so it cannot hold a collector\'s credentials; send to a collector that needs none (a local agent, or one that admits by network)';
/**
 * Where every journal event is sent (issue 28): syslog over TLS, or OTLP/HTTP; exactly one.
 * Plaintext only to this machine (`tls: false` checked in merge.ts; an http endpoint by SERVER_URL).
 */
const syslogSink = z.strictObject({
  host: z.string().max(253).regex(SINK_HOST, 'a host name or IP address, without scheme or port'),
  port: z.number().int().min(1).max(65535),
  tls: z.boolean().optional(),
  caFile: absolutePath.optional(),
});
const otlpSink = z.strictObject(
  { endpoint: z.string().min(1).max(2048).regex(SERVER_URL, 'an https URL (plain http only to this machine)'), caFile: absolutePath.optional() },
  { error: (issue) => (issue.code === 'unrecognized_keys' && issue.keys.includes('headers') ? OTLP_NO_HEADERS : undefined) },
);
const auditSink = z
  .strictObject({ syslog: syslogSink.optional(), otlp: otlpSink.optional() })
  .refine((sink) => (sink.syslog === undefined) !== (sink.otlp === undefined), 'name exactly one sink: {"syslog": {…}} or {"otlp": {…}}')
  .meta({ minProperties: 1, maxProperties: 1 });
const capList = (entry: z.ZodString) => z.array(entry).max(1000).optional();

/** Per grant kind (every one: `satisfies` fails the build when a kind is added), the entries a cap may hold. */
const caps = z.strictObject({
  read: capList(absolutePath),
  write: capList(absolutePath),
  net: capList(hostEntry),
  run: capList(z.string().max(4096).regex(/^(?:[A-Za-z0-9_+][A-Za-z0-9._+-]*|\/.*|[A-Za-z]:[\\/].*)$/, 'a command name (git) or an absolute path')),
  env: capList(z.string().max(4096).regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name')),
  mcp: capList(z.string().max(4096).regex(new RegExp(`^${MCP_NAME}/(?:\\*|${MCP_NAME})$`), 'connection/tool or connection/*')),
} satisfies Record<GrantKind, z.ZodType>);

/** The most characters of the `reason` text (the schema's and the Group Policy text box's limit). */
export const MAX_REASON_CHARS = 500;

const managedConnection = z.union([
  z.strictObject({ name: z.string().regex(NAME), url: z.string().min(1).max(2048).regex(SERVER_URL, 'an https URL (plain http only to this machine)') }),
  z.strictObject({
    name: z.string().regex(NAME),
    command: z.string().min(1).max(4096),
    args: z.array(z.string().max(8192)).max(256).optional(),
    // As `ward connections add --sandbox`: the hosts it may reach and its one writable folder (absolute; default a private one).
    sandbox: z.strictObject({ net: z.array(z.string().min(1).max(300)).max(100), folder: z.string().min(1).max(4096).optional() }).optional(),
  }),
]);

export const POLICY_KEYS: readonly PolicyKey[] = [
  {
    key: 'reason',
    title: 'Who manages Ward here',
    description: 'Shown with every refusal so people know whom to ask, e.g. "Example Corp IT (it@example.com)".',
    schema: z.string().min(1).max(MAX_REASON_CHARS),
    levels: MANDATORY,
    merge: 'join',
    whenUnset: 'refusals name the policy source',
    example: 'Example Corp IT (it@example.com)',
  },
  {
    key: 'namespace',
    title: 'Fixed namespace',
    description: 'The only namespace Ward may use on this computer.',
    schema: z.string().max(32).regex(NAME, 'a namespace is lowercase letters, digits and "-", 1 to 32 characters'),
    levels: MANDATORY,
    merge: 'same',
    whenUnset: 'any namespace',
    example: 'work',
  },
  {
    key: 'cliVersions',
    title: 'Allowed Claude CLI versions',
    description: 'Versions of the pinned Claude CLI that Ward may run; a Ward whose pinned CLI is not listed refuses every run.',
    schema: z.array(z.string().regex(/^\d+\.\d+\.\d+$/, 'a version is MAJOR.MINOR.PATCH')).max(100),
    levels: MANDATORY,
    merge: 'allowList',
    whenUnset: 'the CLI this Ward pins',
    example: ['2.1.328'],
  },
  {
    key: 'providers',
    title: 'Allowed model providers',
    description: 'Hosts (host, host:port or *.domain) of the model provider base URLs runs may use.',
    schema: z.array(hostEntry).max(1000),
    levels: MANDATORY,
    merge: 'allowList',
    whenUnset: 'any provider',
    example: ['api.anthropic.com'],
  },
  {
    key: 'models',
    title: 'Allowed models',
    description: 'Model names runs may use: exact names, or a prefix ending in "*" (claude-sonnet-*). The model gateway refuses any other model the CLI asks for.',
    schema: z.array(z.string().regex(MODEL_PATTERN, 'a model name is letters, digits and . _ : @ - [ ], optionally ending in *')).max(1000),
    levels: MANDATORY,
    merge: 'allowList',
    whenUnset: 'any model',
    example: ['claude-sonnet-*'],
  },
  {
    key: 'forbid',
    title: 'Forbidden permission kinds',
    description: 'Permission kinds nobody may grant (read, write, net, run, env, mcp); requests of these kinds are denied unasked.',
    schema: z.array(z.enum(GRANT_KINDS)).max(GRANT_KINDS.length),
    levels: MANDATORY,
    merge: 'union',
    whenUnset: 'every kind may be granted',
    example: ['run'],
  },
  {
    key: 'caps',
    title: 'Grant caps',
    description: 'Per permission kind, the most anyone may grant: absolute paths for read and write, host patterns for net, commands for run, variable names for env, server/tool for mcp. A kind without a list is not capped.',
    schema: caps,
    levels: MANDATORY,
    merge: 'capsByKind',
    whenUnset: 'no cap',
    example: { read: ['/srv/projects'], net: ['*.example.com'] },
  },
  {
    key: 'allowedConnections',
    title: 'Allowed MCP connections',
    description:
      'MCP servers Ward may connect to, matched by what they are, never by the name a user gives them: a URL (https://mcp.example.com/mcp, or a path prefix ending in /*, host may start with *.), or a command and its arguments (/opt/mcp/server --flag; a last argument * allows any further ones; a JSON array for arguments with spaces).',
    schema: z.array(z.string().min(1).max(8192)).max(1000),
    levels: MANDATORY,
    merge: 'allowList',
    whenUnset: 'any server',
    example: ['https://mcp.example.com/*', '/opt/mcp/bin/tracker *'],
  },
  {
    key: 'deniedConnections',
    title: 'Denied MCP connections',
    description: 'MCP servers Ward never connects to, in the form of allowedConnections; a deny wins over an allow.',
    schema: z.array(z.string().min(1).max(8192)).max(1000),
    levels: MANDATORY,
    merge: 'union',
    whenUnset: 'none denied',
    example: ['https://*.untrusted.example/*'],
  },
  {
    key: 'managedConnectionsOnly',
    title: 'Only managed MCP connections',
    description: 'When true, runs may use only the connections defined in managedConnections (matched by URL or command and arguments).',
    schema: z.boolean(),
    levels: MANDATORY,
    merge: 'trueWins',
    whenUnset: 'false',
    example: true,
  },
  {
    key: 'managedConnections',
    title: 'Managed MCP connections',
    description:
      'Connections the organization defines, added to every namespace and locked: {"name", "url"} for a remote server, {"name", "command", "args"} for a local one. Read only from the admin\'s stores: in the file WARD_POLICY names it is ignored with a warning, since that file may only narrow the policy.',
    schema: z.array(managedConnection).max(100),
    levels: MANDATORY,
    merge: 'byName',
    whenUnset: 'none',
    example: [{ name: 'tracker', url: 'https://mcp.example.com/mcp' }],
    adminOnly: true,
  },
  {
    key: 'localServersSandboxed',
    title: 'Local MCP servers only in the OS sandbox',
    description: 'When true, a local (stdio) MCP server runs only inside the OS sandbox with its own profile: one added without --sandbox is refused, and one already added without it, or written into an agent, is refused before it starts. Managed local connections give theirs with "sandbox": {"net": [...], "folder": "..."}.',
    schema: z.boolean(),
    levels: MANDATORY,
    merge: 'trueWins',
    whenUnset: 'false',
    example: true,
  },
  {
    key: 'credentialStore',
    title: 'Credential store',
    description: 'Where keys and tokens are kept: keychain (the OS keychain), dpapi (Windows data protection) or file (plaintext files readable only by the user: 0600 files in a 0700 folder of the data folder; protected by file permissions alone).',
    schema: z.enum(['keychain', 'dpapi', 'file']),
    levels: EITHER,
    merge: 'same',
    whenUnset: 'the data folder\'s settings.json, else keychain',
    example: 'keychain',
  },
  {
    key: 'allowFileCredentialStore',
    title: 'Allow the file credential store',
    description: 'When false, Ward refuses to keep secrets in its file store (settings.json may not choose it).',
    schema: z.boolean(),
    levels: MANDATORY,
    merge: 'falseWins',
    whenUnset: 'true',
    example: false,
  },
  {
    key: 'sandbox',
    title: 'OS sandbox for runs',
    description: 'auto: confine runs where the OS sandbox is available; require: refuse runs that cannot be confined. Mandatory is a floor WARD_SANDBOX cannot lower.',
    schema: z.enum(['auto', 'require']),
    levels: EITHER,
    merge: 'ordered',
    order: ['auto', 'require'],
    whenUnset: 'WARD_SANDBOX, else auto',
    example: 'require',
  },
  {
    key: 'backgroundService',
    title: 'Background service for ward run',
    description: 'When false, every `ward run` runs its turn in its own process: no background service keeps Ward, its stores or a Claude CLI running between turns for the user.',
    schema: z.boolean(),
    levels: MANDATORY,
    merge: 'falseWins',
    whenUnset: 'true',
    example: false,
  },
  {
    key: 'requireSignedExports',
    title: 'Exports must be signed',
    description: 'When true, every export bundle must carry the namespace\'s signature.',
    schema: z.boolean(),
    levels: MANDATORY,
    merge: 'trueWins',
    whenUnset: 'false',
    example: true,
  },
  {
    key: 'clientMetadataUrl',
    title: 'OAuth client metadata document',
    description: 'The https URL of Ward\'s OAuth Client ID Metadata Document, presented to MCP authorization servers that support it (SEP-991) instead of registering a client dynamically. Overrides the data folder\'s settings.json "clientMetadataUrl".',
    schema: z.url({ protocol: /^https$/ }).max(2048).regex(/^https:\/\//i, 'an https URL'),
    levels: MANDATORY,
    merge: 'same',
    whenUnset: 'settings.json "clientMetadataUrl", else none',
    example: 'https://it.example.com/ward-client.json',
  },
  {
    key: 'approvalTimeoutSeconds',
    title: 'Approval timeout',
    description: 'Seconds a person has to answer a permission question before it counts as a deny (10 to 3600).',
    schema: z.number().int().min(10).max(3600),
    levels: EITHER,
    merge: 'min',
    whenUnset: '120',
    example: 120,
  },
  {
    key: 'auditSink',
    title: 'Audit sink',
    description:
      'Where every journal event (each permission decision, grant, tool call, model call) is also sent, one of: {"syslog": {"host", "port", "tls", "caFile"}} sends RFC 5424 messages (APP-NAME ward) with RFC 5425 framing over TLS, verified against the system roots plus caFile; "tls": false is accepted only for a loopback host. {"otlp": {"endpoint", "caFile"}} sends OTLP/HTTP protobuf log records (GenAI semantic-convention attributes) to an https endpoint such as https://otel.example.com/v1/logs, verified the same way; http only to this machine; no headers (a policy file holds no credentials). Delivery is at-least-once: each event carries its hash as its id (OTLP: log.record.uid), so the receiver can drop duplicates.',
    schema: auditSink,
    levels: MANDATORY,
    merge: 'same',
    whenUnset: 'events stay in the journal only',
    example: { syslog: { host: 'siem.example.com', port: 6514, tls: true, caFile: '/etc/ssl/certs/corp-ca.pem' } },
  },
  {
    key: 'auditContent',
    title: 'Audit content',
    description: 'What the audit sink receives: "metadata" (event type, time, machine, OS user, namespace, conversation, run, agent, tool, decision and who made it, grant, host, path, exit, tokens, cost; no prompt, answer or tool output) or "full" (adds each event\'s text, with the secrets Ward holds redacted).',
    schema: z.enum(['metadata', 'full']),
    levels: MANDATORY,
    merge: 'same',
    whenUnset: 'metadata',
    example: 'metadata',
  },
  {
    key: 'telemetry',
    title: 'Telemetry',
    description: 'Only "off". Ward sends no telemetry, and always turns off the Claude CLI\'s telemetry and error reporting (R3); setting it makes that a managed guarantee shown to users.',
    schema: z.literal('off'),
    levels: MANDATORY,
    merge: 'same',
    whenUnset: 'off (not managed)',
    example: 'off',
  },
  {
    key: 'updates',
    title: 'Automatic updates',
    description: 'Only "off". Ward does not update itself, and always turns off the Claude CLI\'s auto-updater (R3); updates come from the organization\'s installers.',
    schema: z.literal('off'),
    levels: MANDATORY,
    merge: 'same',
    whenUnset: 'off (not managed)',
    example: 'off',
  },
];

/** Keys that once existed and would now mean something else: refused (fail closed), never ignored. */
export const RETIRED_KEYS: Readonly<Record<string, string>> = {
  connections:
    '"connections" matched connections by the name a user gives them, which anyone can choose; list the servers by URL or command in "allowedConnections" instead',
};

export function policyKey(name: string): PolicyKey | undefined {
  return POLICY_KEYS.find((key) => key.key === name);
}
