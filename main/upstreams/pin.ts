/**
 * Pinning (B3): what an agent version records about each tool it may use — the live schema and
 * its hash at publish time — so the broker can refuse the tool if the upstream changes it later.
 */
import { WardError } from '../base/errors.js';
import type { PinnedToolRoute } from './types.js';
import { UpstreamError } from './errors.js';
import type { Upstreams } from './upstreams.js';

export interface ToolSelection {
  readonly upstream: string;
  /** The tool's name at the upstream. */
  readonly name: string;
  /** The name the child sees; defaults to `UPSTREAM_NAME`. */
  readonly exposedName?: string;
}

const EXPOSED_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** Reads each selected tool's live schema and pins it; throws WardError naming the first problem. */
export async function pinTools(upstreams: Upstreams, selections: readonly ToolSelection[]): Promise<PinnedToolRoute[]> {
  const listed = new Map<string, Awaited<ReturnType<Upstreams['listTools']>>>();
  const routes: PinnedToolRoute[] = [];
  for (const selection of selections) {
    let tools = listed.get(selection.upstream);
    if (tools === undefined) {
      try {
        tools = await upstreams.listTools(selection.upstream);
      } catch (error) {
        const code = error instanceof UpstreamError ? error.code : 'upstream_error';
        throw new WardError('invalid_config', `upstream "${selection.upstream}": could not list its tools (${code})`, { cause: error });
      }
      listed.set(selection.upstream, tools);
    }
    const tool = tools.find((candidate) => candidate.name === selection.name);
    if (tool === undefined) throw new WardError('not_found', `upstream "${selection.upstream}" has no tool "${selection.name.slice(0, 64)}"`);
    const exposedName = selection.exposedName ?? `${selection.upstream}_${selection.name}`;
    if (!EXPOSED_NAME.test(exposedName)) {
      throw new WardError('invalid_config', `tool name ${JSON.stringify(exposedName.slice(0, 80))} must be 1–64 of A-Z a-z 0-9 _ -; choose an exposed name`);
    }
    const { description, inputSchema, outputSchema, schemaHash } = tool;
    routes.push({ exposedName, upstream: selection.upstream, upstreamName: tool.name, description, inputSchema, ...(outputSchema === undefined ? {} : { outputSchema }), schemaHash });
  }
  return routes;
}
