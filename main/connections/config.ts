/**
 * What a connection is, validated. Everything here is public metadata (C4); configuration that
 * is absent or malformed fails closed with an error naming the field (L1).
 */
import fs from 'node:fs';
import path from 'node:path';
import { WardError } from '../base/errors.js';
import { formatHostPattern, parseHostPattern, sandboxRefusal } from '../base/host-pattern.js';
import { requireServerUrl, type UrlRefusal } from '../base/url-policy.js';

/** Like namespace names (N1): lowercase letters, digits and "-", 1–32 characters; no "_", so "__" always ends the connection part of a tool name. */
const CONNECTION_NAME = /^[a-z0-9-]{1,32}$/;
export const CONNECTION_NAME_RULE = 'lowercase letters, digits and "-", 1 to 32 characters';
/** An OAuth client id as RFC 6749 allows it (visible ASCII), bounded. */
const CLIENT_ID = /^[\x21-\x7e]{1,256}$/;
/** POSIX-portable environment variable names. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

export const MAX_ARGS = 256;
export const MAX_ARG_BYTES = 8 * 1024;
export const MAX_SECRET_ENV = 32;
export const MAX_URL_LENGTH = 2048;
export const MAX_SANDBOX_HOSTS = 64;
const MAX_PATH_BYTES = 4096;

/** S5: a stdio server confined to the OS sandbox with its own profile. */
export interface ServerSandbox {
  /** The only hosts it may reach, in the sandbox runtime's grammar (`host`, `host:port`, `*.domain`); nothing else is asked about. */
  readonly net: readonly string[];
  /** Its one read-write folder; null = a private folder in the namespace's data. */
  readonly folder: string | null;
}

export interface StdioConnectionSpec {
  readonly transport: 'stdio';
  readonly name: string;
  /** An absolute path or a bare program name looked up in PATH; never run through a shell. */
  readonly command: string;
  readonly args: readonly string[];
  /** Names of environment variables whose values are secrets in the keychain. */
  readonly secretEnv: readonly string[];
  /** Null: the server runs unconfined, as Ward's child. */
  readonly sandbox: ServerSandbox | null;
}

export interface HttpConnectionSpec {
  readonly transport: 'http';
  readonly name: string;
  readonly url: string;
  /** Set only by an explicit override: plain http to a non-loopback host. */
  readonly allowInsecureHttp: boolean;
  /** A client registered with the server's authorization server beforehand (its secret, if any, is in the keychain); null = register at sign-in. */
  readonly clientId: string | null;
}

export type ConnectionSpec = StdioConnectionSpec | HttpConnectionSpec;

/** `desktop`: the same refusal without the terminal's commands and flags, where the message names one. */
function invalid(field: string, message: string, desktop?: string): WardError {
  return new WardError('invalid_config', `connection ${field}: ${message}`, desktop === undefined ? undefined : { desktop: `connection ${field}: ${desktop}` });
}

function shown(value: unknown): string {
  return JSON.stringify(String(value).slice(0, 60));
}

export function parseConnectionName(name: unknown, field = 'name'): string {
  if (typeof name !== 'string' || !CONNECTION_NAME.test(name)) {
    throw invalid(field, `invalid connection name ${shown(name)}: use ${CONNECTION_NAME_RULE}`);
  }
  return name;
}

export function parseEnvName(name: unknown, field: string): string {
  if (typeof name !== 'string' || !ENV_NAME.test(name)) throw invalid(field, `${shown(name)} is not an environment variable name`);
  if (/^(LD_|DYLD_)/.test(name) || name === 'NODE_OPTIONS') throw invalid(field, `${name} may not be set for a server (it changes how programs load)`);
  return name;
}

function hasControl(value: string): boolean {
  return /[\u0000-\u001f\u007f]/.test(value);
}

function serverUrlProblem(refusal: UrlRefusal, raw: string): { readonly message: string; readonly desktop?: string } {
  switch (refusal.reason) {
    case 'not_a_url':
      return { message: `${shown(raw)} is not a URL` };
    case 'scheme':
      return { message: `${shown(raw)} must use https` };
    case 'credentials':
      return { message: 'the URL must not carry a user name or password (sign in with "ward connections login")', desktop: 'the URL must not carry a user name or password (add the connection, then sign in to it)' };
    case 'insecure_http':
      return {
        message: `${shown(raw)} uses plain http to a non-loopback host; use https, or pass --allow-insecure-http if you accept that anyone on the network can read and change the traffic`,
        desktop: `${shown(raw)} uses plain http to a non-loopback host, where anyone on the network can read and change the traffic; use https`,
      };
  }
}

/**
 * A server URL by Ward's one URL policy (L1, main/base/url-policy.ts). No fragments or control
 * characters either: it is public metadata.
 */
export function parseServerUrl(raw: unknown, allowInsecureHttp: boolean, field = 'url'): URL {
  if (typeof raw !== 'string' || raw.length === 0) throw invalid(field, 'a URL is required');
  if (raw.length > MAX_URL_LENGTH) throw invalid(field, `the URL is longer than ${MAX_URL_LENGTH} characters`);
  if (hasControl(raw)) throw invalid(field, 'the URL contains control characters');
  const url = requireServerUrl(raw, allowInsecureHttp, (refusal) => {
    const { message, desktop } = serverUrlProblem(refusal, raw);
    return invalid(field, message, desktop);
  });
  if (url.hash !== '') throw invalid(field, 'the URL must not have a fragment');
  return url;
}

/**
 * Ward's Client ID Metadata Document URL (SEP-991): it becomes the client id at authorization
 * servers that support it, so it must be https with a path (the spec's rule), and public.
 */
export function parseClientMetadataUrl(raw: unknown, source: string): string {
  const problem = (why: string) => new WardError('invalid_config', `${source}: "clientMetadataUrl" ${why}`);
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > MAX_URL_LENGTH || hasControl(raw)) throw problem(`must be a URL of at most ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw problem(`${shown(raw)} is not a URL`);
  }
  if (url.protocol !== 'https:' || url.pathname === '/' || url.username !== '' || url.password !== '' || url.hash !== '') {
    throw problem('must be an https URL with a path, without a user name, password or fragment');
  }
  return url.href;
}

function parseStringArray(raw: unknown, field: string, max: number): string[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) throw invalid(field, 'must be an array of strings');
  if (raw.length > max) throw invalid(field, `at most ${max} entries`);
  return raw.map((item, index) => {
    if (typeof item !== 'string') throw invalid(`${field}[${index}]`, 'must be a string');
    return item;
  });
}

/**
 * The sandbox part of a stdio spec: bounded, each host a pattern the runtime takes (no
 * allow-all), the folder absolute. That the folder exists and lies outside Ward's data is checked
 * where the data folder is known, when the connection is added and again before each start.
 */
function parseServerSandbox(raw: unknown): ServerSandbox | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'object' || Array.isArray(raw)) throw invalid('sandbox', 'must be an object with "net" and "folder"');
  const { net, folder, ...rest } = raw as Record<string, unknown>;
  const unknown = Object.keys(rest)[0];
  if (unknown !== undefined) throw invalid(`sandbox.${unknown}`, 'unknown field');
  const hosts = parseStringArray(net, 'sandbox.net', MAX_SANDBOX_HOSTS).map((entry, index) => {
    const field = `sandbox.net[${index}]`;
    if (hasControl(entry)) throw invalid(field, 'contains control characters');
    const host = formatHostPattern(parseHostPattern(entry, (why) => invalid(field, `${shown(entry)}: ${why}`)));
    const refusal = sandboxRefusal(host);
    if (refusal !== null) throw invalid(field, `${shown(entry)}: ${refusal}`);
    return host;
  });
  if (folder !== undefined && folder !== null) {
    if (typeof folder !== 'string' || folder === '') throw invalid('sandbox.folder', 'must be a path');
    if (Buffer.byteLength(folder) > MAX_PATH_BYTES || hasControl(folder)) throw invalid('sandbox.folder', 'too long or contains control characters');
    if (!path.isAbsolute(folder)) throw invalid('sandbox.folder', `${shown(folder)} must be an absolute path`);
  }
  return { net: [...new Set(hosts)], folder: typeof folder === 'string' ? path.normalize(folder) : null };
}

/**
 * A sandboxed server's own folder, checked against the disk: it must exist as a folder and
 * neither be nor hold Ward's data folder, nor lie inside it, nor be or hold the home folder
 * (S2). Returns its real path.
 */
export function checkSandboxFolder(folder: string, wardHome: string, homes: readonly string[]): string {
  let real: string;
  try {
    real = fs.realpathSync(folder);
  } catch {
    throw invalid('sandbox.folder', `${shown(folder)} does not exist`);
  }
  if (!fs.statSync(real).isDirectory()) throw invalid('sandbox.folder', `${shown(folder)} is not a folder`);
  const home = fs.existsSync(wardHome) ? fs.realpathSync(wardHome) : path.resolve(wardHome);
  if (within(real, home) || within(home, real)) throw invalid('sandbox.folder', `${shown(folder)} is or holds Ward's data folder (${home}); give the server a folder of its own outside it`);
  const userHome = homes.filter((candidate) => fs.existsSync(candidate)).map((candidate) => fs.realpathSync(candidate)).find((candidate) => within(candidate, real));
  if (userHome !== undefined) throw invalid('sandbox.folder', `${shown(folder)} is or holds the home folder (${userHome}); give the server a folder of its own inside it`);
  return real;
}

function within(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** Validates untrusted input (CLI flags, IPC payloads, stored rows) into a spec, or throws naming the field. */
export function parseConnectionSpec(input: unknown): ConnectionSpec {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) throw invalid('spec', 'must be an object');
  const raw = input as Record<string, unknown>;
  const name = parseConnectionName(raw.name);
  const known = raw.transport === 'stdio' ? ['transport', 'name', 'command', 'args', 'secretEnv', 'sandbox'] : ['transport', 'name', 'url', 'allowInsecureHttp', 'clientId'];
  for (const key of Object.keys(raw)) {
    if (!known.includes(key) && raw[key] !== undefined) throw invalid(key, `unknown field for a ${String(raw.transport)} connection`);
  }
  if (raw.transport === 'stdio') {
    const command = raw.command;
    if (typeof command !== 'string' || command.length === 0) throw invalid('command', 'a command is required');
    if (Buffer.byteLength(command) > MAX_ARG_BYTES || hasControl(command)) throw invalid('command', 'too long or contains control characters');
    if (command.includes('/') && !path.isAbsolute(command)) throw invalid('command', `${shown(command)} must be an absolute path or a program name found in PATH`);
    if (/\s/.test(command) && !path.isAbsolute(command)) {
      throw invalid('command', `${shown(command)} contains spaces: give the program alone and each argument with --arg (no shell is used)`);
    }
    const args = parseStringArray(raw.args, 'args', MAX_ARGS);
    args.forEach((arg, index) => {
      if (Buffer.byteLength(arg) > MAX_ARG_BYTES || arg.includes('\0')) throw invalid(`args[${index}]`, 'too long or contains a NUL character');
    });
    const secretEnv = parseStringArray(raw.secretEnv, 'secretEnv', MAX_SECRET_ENV).map((value, index) => parseEnvName(value, `secretEnv[${index}]`));
    if (new Set(secretEnv).size !== secretEnv.length) throw invalid('secretEnv', 'lists a name twice');
    return { transport: 'stdio', name, command, args, secretEnv, sandbox: parseServerSandbox(raw.sandbox) };
  }
  if (raw.transport === 'http') {
    if (raw.allowInsecureHttp !== undefined && typeof raw.allowInsecureHttp !== 'boolean') throw invalid('allowInsecureHttp', 'must be true or false');
    const allowInsecureHttp = raw.allowInsecureHttp === true;
    const url = parseServerUrl(raw.url, allowInsecureHttp);
    const clientId = raw.clientId ?? null;
    if (clientId !== null && (typeof clientId !== 'string' || !CLIENT_ID.test(clientId))) throw invalid('clientId', 'must be 1 to 256 visible ASCII characters without spaces');
    return { transport: 'http', name, url: url.href, allowInsecureHttp, clientId };
  }
  throw invalid('transport', `${shown(raw.transport)} is not a transport; use "stdio" or "http"`);
}

/** The name the child sees for a connection's tool; connection names hold no "_", so the split is unambiguous. */
export function exposedToolName(connection: string, tool: string): string {
  return `${connection}__${tool}`;
}

/** What the broker accepts as a tool name (main/broker/broker.ts). */
const EXPOSED_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** Why an upstream tool name cannot be offered under this connection, or undefined when it can. */
export function unusableToolName(connection: string, tool: string): string | undefined {
  if (!EXPOSED_NAME.test(exposedToolName(connection, tool))) {
    return `tool name ${shown(tool)} cannot be offered: "${connection}__<tool>" must be 1–64 of A-Z a-z 0-9 _ -`;
  }
  return undefined;
}
