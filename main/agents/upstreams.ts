import { WardError } from '../base/errors.js';
import type { UpstreamDefinition } from '../upstreams/definitions.js';
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
