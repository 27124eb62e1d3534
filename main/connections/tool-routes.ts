/** The pinned tools of a namespace's connections as the broker routes them, and the tools a person names. */
import { WardError } from '../base/errors.js';
import { wardCommand } from '../namespaces/namespace.js';
import type { PinnedToolRoute } from '../upstreams/types.js';
import type { LiveTool, ToolListing } from '../upstreams/session.js';
import { exposedToolName } from './config.js';
import type { ConnectionRegistry, ToolPin } from './registry.js';
import { ON_CONNECTIONS } from '../../common/desktop-errors.js';

/** Every enabled, pinned tool of every connection, as the broker routes it; agents choose from these. */
export function pinnedRoutes(registry: ConnectionRegistry): PinnedToolRoute[] {
  const routes: PinnedToolRoute[] = [];
  for (const record of registry.list()) {
    for (const pin of registry.tools(record.spec.name)) {
      if (!pin.enabled || pin.status !== 'pinned') continue;
      routes.push({
        exposedName: exposedToolName(pin.connection, pin.name),
        upstream: pin.connection,
        upstreamName: pin.name,
        description: pin.description,
        inputSchema: pin.inputSchema,
        ...(pin.outputSchema === undefined ? {} : { outputSchema: pin.outputSchema }),
        schemaHash: pin.schemaHash,
      });
    }
  }
  return routes;
}

/**
 * The routes for tools a person picked for an agent, by exposed name (`<connection>__<tool>`);
 * a name that is unknown, turned off or waiting for a re-pin is refused, naming why.
 */
export function resolveRoutes(registry: ConnectionRegistry, exposedNames: readonly string[]): PinnedToolRoute[] {
  const available = new Map(pinnedRoutes(registry).map((route) => [route.exposedName, route]));
  return exposedNames.map((exposed) => {
    const route = available.get(exposed);
    if (route !== undefined) return route;
    const split = exposed.indexOf('__');
    const connection = split > 0 ? exposed.slice(0, split) : '';
    const pin = split > 0 && registry.has(connection) ? registry.tool(connection, exposed.slice(split + 2)) : undefined;
    const shown = JSON.stringify(exposed.slice(0, 100));
    if (pin === undefined) throw new WardError('not_found', `no tool ${shown}: name it <connection>__<tool> as ${wardCommand(registry.namespace, 'connections tools CONNECTION')} lists it`, {
        desktop: `No tool ${shown}: name it <connection>__<tool> as each connection's tools are listed ${ON_CONNECTIONS}.`,
      });
    if (pin.status !== 'pinned') throw new WardError('invalid_config', `tool ${shown} cannot be used: ${pin.reason ?? pin.status}`);
    throw new WardError('invalid_config', `tool ${shown} is turned off; turn it on with ${wardCommand(registry.namespace, `connections tools ${connection} --enable ${pin.name}`)}`, {
      desktop: `Tool ${shown} is turned off: turn it on under ${connection}'s tools ${ON_CONNECTIONS}.`,
    });
  });
}

/**
 * The tool a person named: its own name, or the name Ward lists it under (`files__slow`, as
 * `ward connections tools` prints it) when the connection has no tool of that exact name.
 */
export function toolNamed(registry: ConnectionRegistry, connection: string, given: string): string {
  const prefix = `${connection}__`;
  return given.startsWith(prefix) && registry.tool(connection, given) === undefined ? given.slice(prefix.length) : given;
}

export function pinAsLive(pin: ToolPin): LiveTool {
  return { name: pin.name, description: pin.description, inputSchema: pin.inputSchema, ...(pin.outputSchema === undefined ? {} : { outputSchema: pin.outputSchema }), schemaHash: pin.schemaHash };
}

/** The pinned tools as the server lists them now; a pinned tool it no longer lists is left out, so sync marks it missing. */
export function connectionTools(listing: ToolListing, pins: readonly ToolPin[]): LiveTool[] {
  const live = new Map(listing.tools.map((tool) => [tool.name, tool]));
  return pins.flatMap((pin) => live.get(pin.name) ?? []);
}
