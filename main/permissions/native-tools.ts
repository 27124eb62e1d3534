import path from 'node:path';
import type { PinnedToolRoute } from '../upstreams/types.js';
import { describeError } from '../base/errors.js';
import { parseHostPattern, type GrantKind, type Rule } from './grants.js';
import { makeRequest, matchRule, netRequestForUrl, type PermissionRequest } from './engine.js';
import { joinUnresolved } from './paths.js';

/** The MCP server name the child sees for Ward's broker (`mcp__ward__<tool>`). */
export const WARD_MCP_PREFIX = 'mcp__ward__';

export type ToolMapping = { readonly ok: true; readonly request: PermissionRequest } | { readonly ok: false; readonly reason: string };

export interface ToolContext {
  /** The child's working directory: relative paths in tool inputs resolve against it. */
  readonly baseDir: string;
  /** The run's pinned MCP tools, to map `mcp__ward__<exposed>` to `connection/tool`. */
  readonly routes: readonly PinnedToolRoute[];
}

/** Which native tools each kind offers to the child (P2; names as the pinned CLI 2.1.328 has them). */
export const NATIVE_TOOLS: Readonly<Partial<Record<GrantKind, readonly string[]>>> = {
  read: ['Read', 'Glob', 'Grep'],
  write: ['Edit', 'Write', 'NotebookEdit'],
  run: ['Bash'],
  net: ['WebFetch'],
};

const SHELL_OPERATORS = /[;&|`$<>(){}\n\r\\]/;
const PLAIN_WORD = /^(?:[A-Za-z0-9_+][A-Za-z0-9._+-]*|\/[A-Za-z0-9._+\-/]+)$/;
const GLOB_CHARS = /[*?[\]{}]/;

/**
 * A Bash command line as a run request. Only a simple command (a plain first word, no
 * operators, substitutions, redirections or escapes anywhere) can be covered by a run grant;
 * anything else is marked compound so it is asked about (or denied by a deny rule on its
 * first word), never allowed by a grant.
 */
export function runRequestForCommand(command: string): PermissionRequest {
  const first = command.trim().split(/\s+/)[0] ?? '';
  const plain = PLAIN_WORD.test(first) && !first.split('/').includes('..');
  const value = plain ? (first.startsWith('/') ? path.posix.normalize(first) : first) : first.slice(0, 200);
  return { kind: 'run', value, compound: !plain || SHELL_OPERATORS.test(command), commandLine: command };
}

function stringField(input: Record<string, unknown>, key: string): string | undefined {
  const value = input[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The directory a glob pattern can reach: its literal prefix. Refuses `..` after a wildcard. */
function globRoot(dir: string, pattern: string): string | { reason: string } {
  const segments = pattern.split(/[\\/]+/);
  const literal: string[] = [];
  let wild = false;
  for (const segment of segments) {
    if (!wild && GLOB_CHARS.test(segment)) wild = true;
    if (wild && segment === '..') return { reason: `glob pattern ${JSON.stringify(pattern.slice(0, 100))} climbs with ".." after a wildcard` };
    if (!wild) literal.push(segment);
  }
  // Without a wildcard the pattern names one file; its directory is what the glob searches.
  if (!wild) literal.pop();
  const joined = literal.join('/');
  if (path.isAbsolute(pattern)) return joined === '' ? '/' : joined;
  return joined === '' ? dir : joinUnresolved(dir, joined);
}

function pathRequest(kind: 'read' | 'write', raw: string, context: ToolContext, subtree = false): ToolMapping {
  try {
    const request = makeRequest(kind, raw, context.baseDir);
    return { ok: true, request: subtree ? { ...request, subtree } : request };
  } catch (error) {
    return { ok: false, reason: `cannot check ${kind} of ${JSON.stringify(raw.slice(0, 200))}: ${describeError(error)}` };
  }
}

/**
 * Maps a tool call the CLI asks about (its name and input) to the one permission request
 * that decides it. Unknown tools map to a refusal: the child is only offered tools we know.
 */
export function requestForToolCall(toolName: string, input: Record<string, unknown>, context: ToolContext): ToolMapping {
  switch (toolName) {
    case 'Read':
    case 'NotebookRead': {
      const file = stringField(input, 'file_path') ?? stringField(input, 'notebook_path');
      return file === undefined ? { ok: false, reason: `${toolName} without a file_path` } : pathRequest('read', file, context);
    }
    case 'LS':
      return pathRequest('read', stringField(input, 'path') ?? context.baseDir, context, true);
    case 'Glob':
    case 'Grep': {
      const dir = stringField(input, 'path') ?? context.baseDir;
      const filter = toolName === 'Glob' ? stringField(input, 'pattern') : stringField(input, 'glob');
      if (filter === undefined) return pathRequest('read', dir, context, true);
      if (toolName === 'Grep' && (path.isAbsolute(filter) || filter.split(/[\\/]+/).includes('..'))) {
        return { ok: false, reason: `Grep glob ${JSON.stringify(filter.slice(0, 100))} must stay inside its path` };
      }
      const root = toolName === 'Glob' ? globRoot(joinUnresolved(context.baseDir, dir), filter) : dir;
      return typeof root === 'string' ? pathRequest('read', root, context, true) : { ok: false, reason: root.reason };
    }
    case 'Edit':
    case 'Write':
    case 'MultiEdit':
    case 'NotebookEdit': {
      const file = stringField(input, 'file_path') ?? stringField(input, 'notebook_path');
      return file === undefined ? { ok: false, reason: `${toolName} without a file_path` } : pathRequest('write', file, context);
    }
    case 'Bash': {
      const command = stringField(input, 'command');
      return command === undefined ? { ok: false, reason: 'Bash without a command' } : { ok: true, request: runRequestForCommand(command) };
    }
    case 'WebFetch': {
      const url = stringField(input, 'url');
      if (url === undefined) return { ok: false, reason: 'WebFetch without a url' };
      try {
        return { ok: true, request: netRequestForUrl(url) };
      } catch (error) {
        return { ok: false, reason: describeError(error) };
      }
    }
    case 'WebSearch':
      // A search reaches hosts nobody can name in advance: never covered by a grant, always asked.
      return { ok: true, request: { kind: 'net', value: 'web-search:443', compound: true } };
    default: {
      if (!toolName.startsWith(WARD_MCP_PREFIX)) return { ok: false, reason: `tool ${JSON.stringify(toolName.slice(0, 100))} is not one Ward offers` };
      const exposed = toolName.slice(WARD_MCP_PREFIX.length);
      const route = context.routes.find((candidate) => candidate.exposedName === exposed);
      if (route === undefined) return { ok: false, reason: `tool ${JSON.stringify(exposed.slice(0, 100))} is not pinned for this run` };
      return { ok: true, request: mcpRequestForRoute(route) };
    }
  }
}

export function mcpRequestForRoute(route: PinnedToolRoute): PermissionRequest {
  return { kind: 'mcp', value: `${route.upstream}/${route.upstreamName}` };
}

/**
 * The grants an agent version carries: pinning a tool is the person's consent to it for that
 * agent. A deny grant (flag, conversation, agent) or the admin policy still takes it away, and
 * the broker checks that on every call (B4).
 */
export function pinnedToolRules(routes: readonly PinnedToolRoute[]): Rule[] {
  return routes.map((route) => ({ effect: 'allow', kind: 'mcp', value: mcpRequestForRoute(route).value, source: 'agent' }));
}

export interface CliPermissionOptions {
  /** For `--tools`: native tools of the granted kinds only (empty = none). */
  readonly tools: readonly string[];
  /**
   * For `--settings {"permissions":{"ask":[…]}}`: tools the CLI must ask Ward about on every
   * call. An ask rule beats the CLI's own allow rules and its habit of allowing reads inside
   * its working directory, so every native call is asked of Ward (a `can_use_tool` question) and journaled.
   */
  readonly askTools: readonly string[];
  /** For `--allowedTools`: calls the CLI may make without asking (a subset of what the engine allows). */
  readonly allowedTools: readonly string[];
  /** For `--disallowedTools`: calls the CLI refuses itself (deny rules). */
  readonly disallowedTools: readonly string[];
}

/** Characters that mean something in the CLI's gitignore-style rules or its list splitting. */
const UNRENDERABLE_PATH = /[*?[\]!#\\(),\s{}]/;

function pathRules(tool: string, value: string): string[] | null {
  if (UNRENDERABLE_PATH.test(value) || !value.startsWith('/')) return null;
  return value === '/' ? [`${tool}(//**)`] : [`${tool}(/${value})`, `${tool}(/${value}/**)`];
}

function runRules(value: string): string[] | null {
  return PLAIN_WORD.test(value) ? [`Bash(${value})`, `Bash(${value} *)`] : null;
}

function netRules(value: string): string[] | null {
  const pattern = parseHostPattern(value);
  // The CLI's domain rule ignores ports and wildcards: render only what it expresses exactly.
  if (pattern.wildcard || pattern.port !== null || pattern.host.includes(':')) return null;
  return [`WebFetch(domain:${pattern.host})`];
}

function render(rule: Rule, routes: readonly PinnedToolRoute[]): string[] | null {
  switch (rule.kind) {
    case 'read':
      return pathRules('Read', rule.value);
    case 'write':
      return pathRules('Edit', rule.value);
    case 'run':
      return runRules(rule.value);
    case 'net':
      return netRules(rule.value);
    case 'mcp':
      // A bare tool name in --disallowedTools hides the tool from the child, which the init check
      // would read as a missing pinned tool; the broker refuses denied MCP calls itself.
      if (rule.effect === 'deny') return [];
      return routes.filter((route) => matchRule(rule, mcpRequestForRoute(route)) >= 0).map((route) => `${WARD_MCP_PREFIX}${route.exposedName}`);
    case 'env':
      return [];
  }
}

/**
 * How native grants reach the CLI (P2).
 * - 'ask' (what runs use): only granted tools are offered, and each call is asked of Ward
 *   (the CLI's `can_use_tool` question), which decides from the grants and journals it (P3, P4). Checked against the
 *   pinned CLI: without the ask rule it reads files inside its working directory unasked.
 * - 'rules': grants rendered as path- and command-scoped `--allowedTools`/`--disallowedTools`;
 *   saves a round trip, but the CLI then decides those calls itself and they are not journaled
 *   as permission decisions.
 */
export type CliRenderMode = 'ask' | 'rules';

/**
 * Renders grants as the CLI's own options. The CLI's rules are a convenience: the engine
 * behind Ward's answers to the CLI's questions and the broker decides on its own. An allow rule is rendered only
 * when every deny rule of its kind could be rendered too (otherwise the CLI might pre-allow what
 * a deny rule we could not express forbids); what the CLI syntax cannot express exactly is left
 * to Ward's answer when the CLI asks.
 */
export function renderCliOptions(rules: readonly Rule[], routes: readonly PinnedToolRoute[] = [], mode: CliRenderMode = 'rules'): CliPermissionOptions {
  const tools = new Set<string>();
  const allowed: string[] = [];
  const disallowed: string[] = [];
  const unrenderableDeny = new Set<GrantKind>();
  for (const rule of rules.filter((candidate) => candidate.effect === 'deny')) {
    const rendered = render(rule, routes);
    if (rendered === null) unrenderableDeny.add(rule.kind);
    else disallowed.push(...rendered);
  }
  for (const rule of rules.filter((candidate) => candidate.effect === 'allow')) {
    for (const tool of NATIVE_TOOLS[rule.kind] ?? []) tools.add(tool);
    if (unrenderableDeny.has(rule.kind)) continue;
    allowed.push(...(render(rule, routes) ?? []));
  }
  if (mode === 'ask') {
    // MCP tools stay pre-allowed: the broker checks and journals every MCP call itself (B4).
    const mcpAllowed = allowed.filter((rule) => rule.startsWith(WARD_MCP_PREFIX));
    return { tools: [...tools], askTools: [...tools], allowedTools: [...new Set(mcpAllowed)], disallowedTools: [] };
  }
  return { tools: [...tools], askTools: [], allowedTools: [...new Set(allowed)], disallowedTools: [...new Set(disallowed)] };
}
