import { escapeOneLine } from '../../common/display.js';
import { WardError, describeError } from '../base/errors.js';
import type { UpstreamDefinition } from '../upstreams/definitions.js';
import { UpstreamError } from '../upstreams/upstream-error.js';
import type { Upstreams } from '../upstreams/upstreams.js';
import type { AgentSpec, StdioUpstream } from './spec.js';

/**
 * An agent spec's upstreams as the upstream clients take them. The spec stores only variable
 * names; their values come from Ward's environment at run time and never enter the database.
 */
export function toUpstreamDefinitions(spec: Pick<AgentSpec, 'upstreams'>, env: NodeJS.ProcessEnv): Record<string, UpstreamDefinition> {
  const defs: Record<string, UpstreamDefinition> = {};
  for (const [name, upstream] of Object.entries(spec.upstreams)) defs[name] = toDefinition(name, upstream, env);
  return defs;
}

function toDefinition(name: string, upstream: StdioUpstream, env: NodeJS.ProcessEnv): UpstreamDefinition {
  const values: Record<string, string> = {};
  for (const variable of upstream.envNames) {
    const value = env[variable];
    if (value === undefined || value === '') throw new WardError('credential_missing', `upstream ${name} needs ${variable}, which is not set in Ward's environment`);
    values[variable] = value;
  }
  return { type: 'stdio', command: upstream.command, args: [...upstream.args], env: values };
}

/** How much of a server's stderr a refusal quotes: its last lines (a stack ends with the error), bounded. */
const STDERR_LINES = 12;
const STDERR_CHARS = 700;

/** The end of what a server wrote to stderr, escaped onto one line, with the values it was given as secrets masked. */
function stderrTail(text: string, secrets: readonly string[]): string {
  const masked = secrets.reduce((all, secret) => (secret === '' ? all : all.split(secret).join('[secret]')), text);
  const lines = masked.split('\n').map((line) => line.trim()).filter((line) => line !== '').slice(-STDERR_LINES);
  if (lines.length === 0) return '; it wrote nothing to stderr';
  const joined = lines.map((line) => escapeOneLine(line, 200)).join(' | ');
  return `; its stderr ended with: ${joined.length > STDERR_CHARS ? `…${joined.slice(-STDERR_CHARS)}` : joined}`;
}

/**
 * Starts each server and lists its tools. One that does not start refuses the agent's publishing
 * or run with the end of its stderr, instead of failing each tool call without a word of why.
 */
export async function assertUpstreamsStart(session: Pick<Upstreams, 'listTools' | 'stderr'>, definitions: Readonly<Record<string, UpstreamDefinition>>): Promise<void> {
  for (const [name, definition] of Object.entries(definitions)) {
    try {
      await session.listTools(name);
    } catch (error) {
      const why = error instanceof UpstreamError ? error.detail || error.code : describeError(error);
      const secrets = definition.type === 'stdio' ? Object.values(definition.env ?? {}) : [];
      throw new WardError('unavailable', `upstream ${name}: the server did not start (${why})${stderrTail(session.stderr(name), secrets)}`, { cause: error });
    }
  }
}
