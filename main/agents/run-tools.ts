/**
 * The tools of one run: the agent version's inline stdio upstreams and the namespace
 * connections its pinned tools come from, behind one UpstreamCaller that dispatches by
 * route.upstream. A connection tool that is gone, turned off or changed since the version
 * pinned it refuses the run before anything is spawned for it (B3).
 */
import type { PinnedToolRoute, ToolOutcome, UpstreamCaller } from '../upstreams/types.js';
import type { ConnectionManager } from '../connections/manager.js';
import type { ConnectionSpec } from '../connections/config.js';
import { WardError } from '../base/errors.js';
import type { UpstreamOptions } from '../upstreams/upstreams.js';
import type { Elicitor } from '../upstreams/elicitation.js';
import { isConnectionTool, type AgentSpec, type ConnectionTool } from './spec.js';
import { toUpstreamDefinitions } from './upstreams.js';

export interface RunTools extends UpstreamCaller {
  /** Stops the inline upstreams and the connections' live sessions opened for this run. */
  close(): Promise<void>;
}

export interface OpenRunToolsOptions {
  /** Ward's environment (values for the inline upstreams' named variables). */
  readonly env: NodeJS.ProcessEnv;
  readonly upstreamOptions?: UpstreamOptions;
  /** Opens the namespace's connections; called only when the spec pins a connection tool. */
  readonly openConnections: () => Promise<ConnectionManager>;
  /** Who answers an upstream's request for input, by upstream name (none: declined). */
  readonly elicit?: (upstream: string) => Elicitor;
  /** How the agent version is named in errors, e.g. `agent helper@2`. */
  readonly agentLabel: string;
  /** Throws when a connection may not be used (the admin policy, by what the server is); called before it is started. */
  readonly checkConnection?: (name: string, server: ConnectionSpec) => void;
}

export async function openRunTools(spec: AgentSpec, options: OpenRunToolsOptions): Promise<RunTools> {
  const connectionTools = spec.tools.filter(isConnectionTool);
  let manager: ConnectionManager | undefined;
  let inline: RunTools | undefined;
  try {
    if (connectionTools.length > 0) {
      manager = await options.openConnections();
      for (const name of new Set(connectionTools.map((tool) => tool.connection))) {
        const record = manager.registry.has(name) ? manager.registry.get(name) : undefined;
        if (record !== undefined) options.checkConnection?.(name, record.spec);
      }
      await checkConnectionTools(manager, connectionTools, options.agentLabel);
    }
    // The MCP client code is loaded only for an agent with upstreams: a plain turn starts without it.
    if (Object.keys(spec.upstreams).length > 0) inline = await (await import('../upstreams/upstreams.js')).openUpstreams(toUpstreamDefinitions(spec, options.env), options.upstreamOptions, options.elicit);
  } catch (error) {
    await manager?.close().catch(() => undefined);
    throw error;
  }
  const inlineNames = new Set(Object.keys(spec.upstreams));
  const connections = manager;
  return {
    callTool: (route: PinnedToolRoute, args: Record<string, unknown>, signal: AbortSignal): Promise<ToolOutcome> => {
      if (inline !== undefined && inlineNames.has(route.upstream)) return inline.callTool(route, args, signal);
      if (connections !== undefined && !inlineNames.has(route.upstream)) return connections.caller.callTool(route, args, signal);
      return import('../upstreams/errors.js').then(({ failedOutcome, UpstreamError }) => failedOutcome(new UpstreamError('refused', `this agent has no upstream named ${route.upstream}`)));
    },
    close: async () => {
      await Promise.allSettled([inline?.close(), connections?.close()]);
    },
  };
}

/**
 * Refuses the run unless every pinned connection tool is still offered, on, and has the schema
 * hash the agent version pinned: first from the registry (nothing started), then against what
 * each server lists now. A server that cannot be reached now does not refuse the run: its calls
 * fail with specific errors, and every call re-checks the schema (B4).
 */
async function checkConnectionTools(manager: ConnectionManager, tools: readonly ConnectionTool[], agentLabel: string): Promise<void> {
  const check = (tool: ConnectionTool): void => {
    const label = `${tool.connection}/${tool.name}`;
    if (!manager.registry.has(tool.connection)) {
      throw new WardError('not_found', `${agentLabel} pins ${label}, but there is no connection named ${tool.connection} any more; add it again, or publish a version of the agent without it`);
    }
    const pin = manager.registry.pinState(tool.connection, tool.name);
    if (pin === undefined || pin.status === 'missing') {
      throw new WardError('not_found', `${agentLabel} pins ${label}, but connection ${tool.connection} no longer offers ${tool.name}; publish a version of the agent without it`);
    }
    if (!pin.enabled) {
      throw new WardError('invalid_config', `${agentLabel} pins ${label}, which is turned off; turn it on with "ward connections tools ${tool.connection} --enable ${tool.name}"`);
    }
    if (pin.status === 'schema_changed' || pin.schemaHash !== tool.schemaHash) {
      throw new WardError(
        'invalid_config',
        `${agentLabel} pins ${label}, whose input schema changed since it was pinned; re-pin it with "ward connections tools ${tool.connection} --repin ${tool.name}" and publish a new version of the agent with --tool ${label}`,
      );
    }
  };
  for (const tool of tools) check(tool);
  for (const connection of new Set(tools.map((tool) => tool.connection))) await manager.discover(connection).catch(() => undefined);
  for (const tool of tools) check(tool);
}
