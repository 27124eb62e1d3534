/**
 * Upstream MCP servers a run may reach, as an agent spec (or later a connection) names them.
 * Parsed fail-closed (L1): anything unexpected is refused with a message that says what.
 */
import { WardError } from '../base/errors.js';
import { requireServerUrl, type UrlRefusal } from '../base/url-policy.js';

export interface StdioUpstreamDefinition {
  readonly type: 'stdio';
  /** An executable path or a name looked up on the allowlisted PATH; never run through a shell. */
  readonly command: string;
  readonly args?: readonly string[];
  /** Values the host names explicitly (e.g. a credential); added to the PATH/HOME/LANG allowlist. */
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
}

export interface HttpUpstreamDefinition {
  readonly type: 'http';
  readonly url: string;
  /** Supplied by the host (e.g. `Authorization`); never logged or reported. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Permits `http://` to a non-loopback host (L1). */
  readonly allowInsecureHttp?: boolean;
}

export type UpstreamDefinition = StdioUpstreamDefinition | HttpUpstreamDefinition;

const UPSTREAM_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;

function fail(name: string, problem: string): never {
  throw new WardError('invalid_config', `upstream "${name}": ${problem}`);
}

function urlProblem(refusal: UrlRefusal): string {
  switch (refusal.reason) {
    case 'not_a_url':
      return 'url is not a valid URL';
    case 'credentials':
      return 'url must not carry credentials; use headers';
    case 'scheme':
      return `url must be https:// (got ${refusal.url.protocol})`;
    case 'insecure_http':
      return `http:// is allowed only for loopback hosts (got ${refusal.url.hostname}); use https:// or set allowInsecureHttp`;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stringRecord(name: string, field: string, value: unknown, key: RegExp): Record<string, string> {
  if (!isRecord(value)) fail(name, `${field} must be an object of strings`);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (!key.test(k)) fail(name, `${field} has an invalid name ${JSON.stringify(k.slice(0, 64))}`);
    // Values may be secrets: say which entry is wrong, never what it holds.
    if (typeof v !== 'string' || v.includes('\0') || /[\r\n]/.test(v)) fail(name, `${field}.${k} must be a single-line string`);
    out[k] = v;
  }
  return out;
}

function parseOne(name: string, raw: unknown): UpstreamDefinition {
  if (!UPSTREAM_NAME.test(name)) fail(name.slice(0, 64), 'the name must be 1–64 of A-Z a-z 0-9 _ - and start with a letter or digit');
  if (!isRecord(raw)) fail(name, 'the definition must be an object');
  if (raw.type === 'stdio') {
    const known = new Set(['type', 'command', 'args', 'env', 'cwd']);
    for (const key of Object.keys(raw)) if (!known.has(key)) fail(name, `unknown field "${key.slice(0, 64)}"`);
    if (typeof raw.command !== 'string' || raw.command.length === 0 || raw.command.includes('\0')) fail(name, 'command must be a non-empty string');
    const args = raw.args ?? [];
    if (!Array.isArray(args) || !args.every((arg): arg is string => typeof arg === 'string' && !arg.includes('\0'))) {
      fail(name, 'args must be an array of strings');
    }
    if (raw.cwd !== undefined && (typeof raw.cwd !== 'string' || raw.cwd.length === 0)) fail(name, 'cwd must be a non-empty string');
    return {
      type: 'stdio',
      command: raw.command,
      args: [...args],
      env: raw.env === undefined ? {} : stringRecord(name, 'env', raw.env, ENV_NAME),
      ...(raw.cwd === undefined ? {} : { cwd: raw.cwd as string }),
    };
  }
  if (raw.type === 'http') {
    const known = new Set(['type', 'url', 'headers', 'allowInsecureHttp']);
    for (const key of Object.keys(raw)) if (!known.has(key)) fail(name, `unknown field "${key.slice(0, 64)}"`);
    if (typeof raw.url !== 'string') fail(name, 'url must be a string');
    if (raw.allowInsecureHttp !== undefined && typeof raw.allowInsecureHttp !== 'boolean') fail(name, 'allowInsecureHttp must be a boolean');
    const url = requireServerUrl(raw.url, raw.allowInsecureHttp === true, (refusal) => new WardError('invalid_config', `upstream "${name}": ${urlProblem(refusal)}`));
    return {
      type: 'http',
      url: url.href,
      headers: raw.headers === undefined ? {} : stringRecord(name, 'headers', raw.headers, HEADER_NAME),
      allowInsecureHttp: raw.allowInsecureHttp === true,
    };
  }
  fail(name, 'type must be "stdio" or "http"');
}

/** Validates an agent spec's upstream table; throws WardError('invalid_config') naming the first problem. */
export function parseUpstreamDefinitions(raw: unknown): Record<string, UpstreamDefinition> {
  if (!isRecord(raw)) throw new WardError('invalid_config', 'upstreams must be an object keyed by upstream name');
  const out: Record<string, UpstreamDefinition> = {};
  for (const [name, def] of Object.entries(raw)) out[name] = parseOne(name, def);
  return out;
}
