/**
 * Reading published agents without starting anything (`ward agents list/show`, the names in
 * `ward permissions`): no connection or MCP code is loaded for it.
 */
import { parseAgentSpec, toolSource, type AgentSpec } from '../agents/spec.js';
import type { AgentVersion } from '../store/agents.js';
import type { NamespaceStore } from '../store/namespace-store.js';

/** What `ward agents list/show` prints of a version. */
export interface AgentSummary {
  readonly name: string;
  readonly version: number;
  readonly modelProfile: string;
  readonly upstreams: readonly string[];
  readonly tools: readonly string[];
  readonly specHash: string;
  readonly publishedAt: string;
}

/** One version whole: its summary, its stored spec, and each pinned tool with where it comes from. */
export interface AgentDetail {
  readonly summary: AgentSummary;
  readonly spec: AgentSpec;
  /** The spec as stored (for --json). */
  readonly stored: unknown;
  readonly tools: readonly { readonly exposedName: string; readonly source: string; readonly description: string }[];
}

export function agentSummary(version: AgentVersion): AgentSummary {
  const spec = parseAgentSpec(version.spec);
  return {
    name: version.agentName,
    version: version.version,
    modelProfile: spec.modelProfile,
    upstreams: Object.keys(spec.upstreams),
    tools: spec.tools.map((tool) => `${toolSource(tool)}/${tool.name}`),
    specHash: version.specHash,
    publishedAt: version.publishedAt,
  };
}

export class AgentCatalog {
  list(store: NamespaceStore): AgentSummary[] {
    return store.agents.list().map(agentSummary);
  }

  /** The latest version of `name`, or the one numbered `version`. */
  show(store: NamespaceStore, name: string, version?: number): AgentDetail {
    const stored = store.agents.get(name, version);
    const spec = parseAgentSpec(stored.spec);
    return {
      summary: agentSummary(stored),
      spec,
      stored: stored.spec,
      tools: spec.tools.map((tool) => ({ exposedName: tool.exposedName, source: toolSource(tool), description: tool.description })),
    };
  }

  /** An agent's name by its id (agents are known to people by name); an unknown id shows as its prefix. */
  names(store: NamespaceStore): (agentId: string) => string {
    const names = new Map(store.agents.list().map((version) => [version.agentId, version.agentName]));
    return (agentId) => names.get(agentId) ?? agentId.slice(0, 8);
  }
}
