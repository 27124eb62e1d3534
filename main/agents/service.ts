/**
 * Creating agent versions: tools are discovered from the upstream (tools/list) or the
 * namespace's connection, pinned with the hash of their input schema (B3), and published as a
 * new immutable version.
 */
import { WardError, describeError } from '../base/errors.js';
import type { AgentVersion } from '../store/agents.js';
import type { NamespaceStore } from '../store/namespace-store.js';
import { wardCommand } from '../namespaces/namespace.js';
import { openUpstreams, type UpstreamOptions, type Upstreams } from '../upstreams/upstreams.js';
import { UpstreamError, classifyUpstreamError } from '../upstreams/errors.js';
import { exposedToolName } from '../connections/config.js';
import type { ConnectionManager } from '../connections/manager.js';
import { parseAgentSpec, type AgentSpec, type ConnectionTool, type PinnedTool, type StdioUpstream } from './spec.js';
import { assertUpstreamsStart, toUpstreamDefinitions } from './upstreams.js';
import { absolutePaths } from '../base/process.js';
import { ON_CONNECTIONS } from '../../common/desktop-errors.js';

/** `UPSTREAM/TOOL`, or `UPSTREAM/*` for every tool the upstream lists; UPSTREAM is an inline upstream or a connection. */
export interface ToolSelector {
  readonly upstream: string;
  readonly tool: string;
}

export function parseToolSelector(text: string): ToolSelector {
  const slash = text.indexOf('/');
  if (slash <= 0 || slash === text.length - 1) throw new WardError('usage', `a tool is named UPSTREAM/TOOL (or UPSTREAM/*), not ${JSON.stringify(text.slice(0, 80))}`);
  return { upstream: text.slice(0, slash), tool: text.slice(slash + 1) };
}

/** `NAME=COMMAND [ARGS...]` split on spaces (no shell, no quoting): for simple stdio servers. */
export function parseUpstreamOption(text: string, cwd: string): [string, StdioUpstream] {
  const eq = text.indexOf('=');
  if (eq <= 0) throw new WardError('usage', `an upstream is given as NAME=COMMAND [ARGS...], not ${JSON.stringify(text.slice(0, 80))}`);
  const words = text.slice(eq + 1).trim().split(/\s+/).filter((word) => word !== '');
  if (words.length === 0) throw new WardError('usage', `upstream ${text.slice(0, eq)} has no command`);
  // ./my-server.js means the file next to the person publishing, not next to a later `ward run`.
  const { command, args } = absolutePaths(words[0]!, words.slice(1), cwd);
  return [text.slice(0, eq), { type: 'stdio', command, args, envNames: [] }];
}

const EXPOSED = /[^A-Za-z0-9_-]/g;

export interface CreateAgentInput {
  readonly name: string;
  readonly instructions: string;
  readonly modelProfile?: string;
  readonly upstreams?: Readonly<Record<string, StdioUpstream>>;
  readonly tools?: readonly ToolSelector[];
}

/** What pinning needs of the namespace's connections. */
export type ConnectionSource = Pick<ConnectionManager, 'registry' | 'discover' | 'routes'>;

/**
 * Connects to the named upstreams, pins the selected tools and publishes the next version. A
 * selector whose UPSTREAM was not given inline names a connection (`connections` opens the
 * namespace's; without it such a selector is refused).
 */
export async function createAgentVersion(
  store: NamespaceStore,
  input: CreateAgentInput,
  env: NodeJS.ProcessEnv,
  options: UpstreamOptions = {},
  connections?: ConnectionSource,
): Promise<AgentVersion> {
  const upstreams = { ...(input.upstreams ?? {}) };
  const selectors = input.tools ?? [];
  const inline = selectors.filter((selector) => upstreams[selector.upstream] !== undefined);
  const fromConnections = selectors.filter((selector) => upstreams[selector.upstream] === undefined);
  if (fromConnections.length > 0 && connections === undefined) {
    const first = fromConnections[0]!;
    throw new WardError('usage', `tool ${first.upstream}/${first.tool} names an upstream that was not given with --upstream`);
  }
  // Validate everything that does not need the upstream before starting any process.
  parseAgentSpec({ instructions: input.instructions, modelProfile: input.modelProfile ?? 'default', upstreams, tools: [] });
  let tools: PinnedTool[] = [];
  if (Object.keys(upstreams).length > 0) {
    const definitions = toUpstreamDefinitions({ upstreams }, env);
    const session = await openUpstreams(definitions, options);
    try {
      // Every server given must start now: one that cannot is named with what it said, not published.
      await assertUpstreamsStart(session, definitions);
      tools = await pinTools(session, inline);
    } finally {
      await session.close();
    }
  }
  if (connections !== undefined && fromConnections.length > 0) tools = [...tools, ...(await pinConnectionTools(connections, fromConnections))];
  const spec: AgentSpec = parseAgentSpec({ instructions: input.instructions, modelProfile: input.modelProfile ?? 'default', upstreams, tools });
  return store.agents.publish(input.name, spec);
}

/**
 * Pins connection tools as the server lists them now: the listing is refreshed first, so a
 * schema that changed since `ward connections tools` shows as changed here (B3), not pinned.
 */
export async function pinConnectionTools(connections: ConnectionSource, selectors: readonly ToolSelector[]): Promise<ConnectionTool[]> {
  const discovered = new Set<string>();
  const pinned: ConnectionTool[] = [];
  for (const { upstream: connection, tool } of selectors) {
    if (!connections.registry.has(connection)) {
      throw new WardError('not_found', `tool ${connection}/${tool}: there is no inline upstream or connection named ${connection} (add one with ${wardCommand(connections.registry.namespace, 'connections add')} or --upstream)`, {
        desktop: `Tool ${connection}/${tool}: there is no connection named ${connection}; add one ${ON_CONNECTIONS}.`,
      });
    }
    if (!discovered.has(connection)) {
      try {
        await connections.discover(connection);
      } catch (error) {
        const failure = classifyUpstreamError(error);
        throw new WardError('unavailable', `could not list the tools of connection ${connection} (${failure.code}): ${failure.detail || describeError(error)}`, { cause: error });
      }
      discovered.add(connection);
    }
    const routes = connections.routes().filter((route) => route.upstream === connection);
    let chosen = routes;
    if (tool !== '*') {
      const pin = connections.registry.tool(connection, tool);
      if (pin === undefined || pin.status === 'missing') {
        const offered = connections.registry.tools(connection).filter((candidate) => candidate.status !== 'missing').map((candidate) => candidate.name);
        throw new WardError('not_found', `connection ${connection} has no tool ${JSON.stringify(tool.slice(0, 64))} (it lists: ${offered.slice(0, 20).join(', ') || 'none'})`);
      }
      if (pin.status === 'schema_changed') {
        throw new WardError('invalid_config', `tool ${connection}/${tool} cannot be pinned: its input schema changed upstream; re-pin it with ${wardCommand(connections.registry.namespace, `connections tools ${connection} --repin ${tool}`)} first`, {
          desktop: `Tool ${connection}/${tool} cannot be pinned: its input schema changed upstream; re-pin it under ${connection}'s tools ${ON_CONNECTIONS}.`,
        });
      }
      if (!pin.enabled) {
        throw new WardError('invalid_config', `tool ${connection}/${tool} is turned off; turn it on with ${wardCommand(connections.registry.namespace, `connections tools ${connection} --enable ${tool}`)}`, {
          desktop: `Tool ${connection}/${tool} is turned off: turn it on under ${connection}'s tools ${ON_CONNECTIONS}.`,
        });
      }
      chosen = routes.filter((route) => route.upstreamName === tool);
    }
    if (chosen.length === 0) throw new WardError('not_found', `connection ${connection} has no tool that is on and pinned`);
    for (const route of chosen) {
      pinned.push({
        source: 'connection',
        connection,
        name: route.upstreamName,
        exposedName: route.exposedName,
        description: route.description.slice(0, 8192),
        inputSchema: route.inputSchema,
        ...(route.outputSchema === undefined ? {} : { outputSchema: route.outputSchema }),
        schemaHash: route.schemaHash,
      });
    }
  }
  return pinned;
}

async function pinTools(session: Pick<Upstreams, 'listTools'>, selectors: readonly ToolSelector[]): Promise<PinnedTool[]> {
  const listed = new Map<string, Awaited<ReturnType<Upstreams['listTools']>>>();
  const pinned: PinnedTool[] = [];
  for (const selector of selectors) {
    let tools = listed.get(selector.upstream);
    if (tools === undefined) {
      try {
        tools = await session.listTools(selector.upstream);
      } catch (error) {
        const code = error instanceof UpstreamError ? error.code : 'upstream_error';
        throw new WardError('run_failed', `could not list the tools of upstream ${selector.upstream} (${code}): ${describeError(error)}`);
      }
      listed.set(selector.upstream, tools);
    }
    const chosen = selector.tool === '*' ? tools : tools.filter((tool) => tool.name === selector.tool);
    if (chosen.length === 0) {
      throw new WardError('not_found', `upstream ${selector.upstream} has no tool ${selector.tool} (it lists: ${tools.map((tool) => tool.name).slice(0, 20).join(', ') || 'none'})`);
    }
    for (const tool of chosen) {
      pinned.push({
        upstream: selector.upstream,
        name: tool.name,
        // One naming rule with connection tools: prefixed by the server's name (weather__forecast).
        exposedName: exposedToolName(selector.upstream, tool.name).replace(EXPOSED, '_').slice(0, 64),
        description: tool.description.slice(0, 8192),
        inputSchema: tool.inputSchema,
        ...(tool.outputSchema === undefined ? {} : { outputSchema: tool.outputSchema }),
        schemaHash: tool.schemaHash,
      });
    }
  }
  return pinned;
}
