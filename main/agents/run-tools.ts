/**
 * The tools of one run: the agent version's inline stdio upstreams and the namespace
 * connections its pinned tools come from, behind one UpstreamCaller that dispatches by
 * route.upstream. A connection tool that is gone, turned off or changed since the version
 * pinned it refuses the run before anything is spawned for it (B3).
 */
import type { PinnedToolRoute, ToolOutcome, UpstreamCaller } from '../upstreams/types.js';
import type { ConnectionManager } from '../connections/manager.js';
import type { ConnectionSpec } from '../connections/config.js';
import type { ConnectionRegistry } from '../connections/registry.js';
import { wardCommand, type Namespace } from '../namespaces/namespace.js';
import { WardError } from '../base/errors.js';
import { failedOutcome, UpstreamError } from '../upstreams/upstream-error.js';
import type { UpstreamOptions } from '../upstreams/upstreams.js';
import type { Elicitor } from '../upstreams/elicitation.js';
import { isConnectionTool, type AgentSpec, type ConnectionTool } from './spec.js';
import { assertUpstreamsStart, toUpstreamDefinitions } from './upstreams.js';
import { ON_AGENTS, ON_CONNECTIONS } from '../../common/desktop-errors.js';

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
  /** The namespace the run is in: the commands a refusal names act on it. */
  readonly namespace: Namespace;
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
      await checkConnectionTools(manager, connectionTools, options.agentLabel, options.namespace);
    }
    if (Object.keys(spec.upstreams).length > 0) {
      const definitions = toUpstreamDefinitions(spec, options.env);
      // The MCP client code is loaded only for an agent with upstreams: a plain turn starts without it.
      const { openUpstreams } = await import('../upstreams/upstreams.js');
      const opened = await openUpstreams(definitions, options.upstreamOptions, options.elicit);
      inline = opened;
      // A server that cannot start fails the run with its stderr, not each call without a word.
      await assertUpstreamsStart(opened, definitions);
    }
  } catch (error) {
    await Promise.allSettled([manager?.close(), inline?.close()]);
    throw error;
  }
  const inlineNames = new Set(Object.keys(spec.upstreams));
  const connections = manager;
  return {
    callTool: (route: PinnedToolRoute, args: Record<string, unknown>, signal: AbortSignal): Promise<ToolOutcome> => {
      if (inline !== undefined && inlineNames.has(route.upstream)) return inline.callTool(route, args, signal);
      if (connections !== undefined && !inlineNames.has(route.upstream)) return connections.caller.callTool(route, args, signal);
      return Promise.resolve(failedOutcome(new UpstreamError('refused', `this agent has no upstream named ${route.upstream}`)));
    },
    close: async () => {
      await Promise.allSettled([inline?.close(), connections?.close()]);
    },
  };
}

/**
 * Refuses the run unless every pinned connection tool is still offered, on, and has the schema
 * hash the agent version pinned, as the registry records it (nothing is started). Each refusal
 * names the command that fixes it, in the run's namespace.
 */
export function assertConnectionToolsPinned(registry: ConnectionRegistry, tools: readonly ConnectionTool[], agentLabel: string, ns: Namespace): void {
  for (const tool of tools) {
    const label = `${tool.connection}/${tool.name}`;
    if (!registry.has(tool.connection)) {
      throw new WardError('not_found', `${agentLabel} pins ${label}, but there is no connection named ${tool.connection} any more; add it again (${wardCommand(ns, `connections add ${tool.connection} ...`)}), or publish a version of the agent without it`, {
        desktop: `${agentLabel} pins ${label}, but there is no connection named ${tool.connection} any more: add it again ${ON_CONNECTIONS}, or publish a version of the agent without it ${ON_AGENTS}.`,
      });
    }
    const pin = registry.pinState(tool.connection, tool.name);
    if (pin === undefined || pin.status === 'missing') {
      throw new WardError('not_found', `${agentLabel} pins ${label}, but connection ${tool.connection} no longer offers ${tool.name}; publish a version of the agent without it`);
    }
    if (!pin.enabled) {
      throw new WardError('invalid_config', `${agentLabel} pins ${label}, which is turned off; turn it on with ${wardCommand(ns, `connections tools ${tool.connection} --enable ${tool.name}`)}`, {
        desktop: `${agentLabel} pins ${label}, which is turned off: turn it on under ${tool.connection}'s tools ${ON_CONNECTIONS}.`,
      });
    }
    if (pin.status === 'schema_changed' || pin.schemaHash !== tool.schemaHash) {
      throw new WardError(
        'invalid_config',
        `${agentLabel} pins ${label}, whose input schema changed since it was pinned; re-pin it with ${wardCommand(ns, `connections tools ${tool.connection} --repin ${tool.name}`)} and publish a new version of the agent with --tool ${label}`,
        { desktop: `${agentLabel} pins ${label}, whose input schema changed since it was pinned: re-pin it under ${tool.connection}'s tools ${ON_CONNECTIONS}, then publish a new version of the agent ${ON_AGENTS}.` },
      );
    }
  }
}

/**
 * The registry check, then the same against what each server lists now. A server that cannot be
 * reached now does not refuse the run: its calls fail with specific errors, and every call
 * re-checks the schema (B4).
 */
export async function checkConnectionTools(manager: ConnectionManager, tools: readonly ConnectionTool[], agentLabel: string, ns: Namespace): Promise<void> {
  assertConnectionToolsPinned(manager.registry, tools, agentLabel, ns);
  for (const connection of new Set(tools.map((tool) => tool.connection))) await manager.discover(connection).catch(() => undefined);
  assertConnectionToolsPinned(manager.registry, tools, agentLabel, ns);
}
