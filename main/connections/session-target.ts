/**
 * How a connection's session is reached: a stdio server's argv and whole environment (its named
 * secrets from the keychain), confined in the OS sandbox when it asks for one; an HTTP server
 * through Ward's fetch, which carries the connection's token and records the scope it is asked for.
 */
import { describeError } from '../base/errors.js';
import type { SecretStore } from '../credentials/secret-store.js';
import { UpstreamError } from '../upstreams/errors.js';
import { stdioEnvironment, type BoundedLog } from '../upstreams/stdio-transport.js';
import type { SessionTarget } from '../upstreams/session.js';
import { parseEnvName, type ConnectionSpec, type ServerSandbox, type StdioConnectionSpec } from './config.js';
import { parseScope, unionScopes } from './challenge.js';
import { connectionFetch, type ScopeRecord } from './http-fetch.js';
import type { ConnectionOAuthProvider } from './oauth.js';
import type { ConnectionRegistry } from './registry.js';

export function secretEnvAccount(connection: string, variable: string): string {
  return `mcp:${connection}:env:${variable}`;
}

/** What a stdio server is started as: argv without a shell, its whole environment, its folder. */
export interface StdioCommand {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd?: string;
}

/**
 * S5: puts a sandboxed server's command inside the OS sandbox with the server's own profile, or
 * refuses (fail closed). The app provides it: the sandbox is not a dependency of connections.
 */
export type ConfineServer = (spec: StdioConnectionSpec & { readonly sandbox: ServerSandbox }, command: StdioCommand) => Promise<StdioCommand & { release(): void }>;

export interface TargetDeps {
  readonly registry: ConnectionRegistry;
  readonly secrets: SecretStore;
  /** Starts servers that asked for the sandbox; absent, they are refused. */
  readonly confine?: ConfineServer;
  /** Why a local server without a sandbox profile may not start; absent, it may. */
  readonly unsandboxedRefusal?: string;
  /** The stdio server's stderr for this session (the manager keeps it after the session ends). */
  readonly stderr: () => BoundedLog;
  /** The HTTP connection's OAuth provider (one per connection, shared with sign-in). */
  readonly provider: (spec: Extract<ConnectionSpec, { transport: 'http' }>) => ConnectionOAuthProvider;
}

export async function sessionTarget(spec: ConnectionSpec, deps: TargetDeps): Promise<SessionTarget> {
  if (spec.transport === 'stdio') {
    const stderr = deps.stderr();
    const command = { command: spec.command, args: spec.args, env: await stdioEnv(spec, deps.secrets) };
    if (spec.sandbox === null) {
      if (deps.unsandboxedRefusal !== undefined) throw new UpstreamError('unreachable', `connection ${spec.name}: ${deps.unsandboxedRefusal}; the server was not started`);
      return { transport: 'stdio', ...command, stderr };
    }
    const confined = await confine({ ...spec, sandbox: spec.sandbox }, command, deps.confine);
    return { transport: 'stdio', ...confined, stderr, onExit: () => confined.release() };
  }
  const serverUrl = new URL(spec.url);
  const provider = deps.provider(spec);
  const registry = deps.registry;
  const scopes: ScopeRecord = {
    asked: () => registry.get(spec.name).scope,
    want: (scope) => {
      const wanted = registry.get(spec.name).wantedScope;
      // Bounded like any scope: an ever-growing demand ends in a refusal, not an oversized row.
      registry.setWantedScope(spec.name, parseScope(unionScopes(wanted, scope)!, 'the scope the server asks for'));
    },
  };
  // Ward's fetch handles the token and the one refresh-and-retry (under a lock), not the SDK transport.
  return { transport: 'http', url: serverUrl, authorize: (fetch) => connectionFetch({ serverUrl, provider, lockFile: provider.lockFile, scopes }, fetch) };
}

/** The child's whole environment: allowlisted variables of Ward's own, plus its named secrets from the keychain (R2, C3). */
async function stdioEnv(spec: StdioConnectionSpec, store: SecretStore): Promise<Record<string, string>> {
  const secrets: Record<string, string> = {};
  for (const variable of spec.secretEnv) {
    parseEnvName(variable, 'secretEnv');
    const value = await store.get(secretEnvAccount(spec.name, variable));
    if (value === undefined) {
      throw new UpstreamError('not_signed_in', `the secret for ${variable} is missing from the credential store; remove and add the connection again`);
    }
    secrets[variable] = value;
  }
  return stdioEnvironment(secrets);
}

/** A refusal to start the server is told as the connection being unreachable, with the reason (which names what is missing). */
async function confine(spec: StdioConnectionSpec & { readonly sandbox: ServerSandbox }, command: StdioCommand, confineServer: ConfineServer | undefined): Promise<StdioCommand & { release(): void }> {
  if (confineServer === undefined) throw new UpstreamError('unreachable', `connection ${spec.name} runs in the sandbox, which this host of Ward does not provide; the server was not started`);
  try {
    return await confineServer(spec, command);
  } catch (error) {
    throw new UpstreamError('unreachable', describeError(error), { cause: error });
  }
}
