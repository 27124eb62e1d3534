/**
 * Agents: immutable published versions with pinned tools (B3) and their own grants. `ward agents`
 * and the desktop's agent editor both publish through here.
 */
import os from 'node:os';
import type { AgentView } from '../../common/views.js';
import { WardError } from '../base/errors.js';
import { createAgentVersion, pinConnectionTools, type CreateAgentInput, type ToolSelector } from '../agents/service.js';
import { DEFAULT_AGENT_SPEC, parseAgentSpec, toolSource, type AgentSpec } from '../agents/spec.js';
import { parseGrantList, type Effect } from '../permissions/grants.js';
import type { AgentVersion } from '../store/agents.js';
import type { NamespaceStore } from '../store/namespace-store.js';
import type { ConnectionService } from './connections.js';
import type { GrantService } from './grants.js';
import { ON_AGENTS } from '../../common/desktop-errors.js';

// How the adapters spell an agent's upstreams and tools on the way in.
export { parseToolSelector, parseUpstreamOption } from '../agents/service.js';
export type { StdioUpstream } from '../agents/spec.js';

/** The desktop editor's publish: keep some pinned tools, add some from the namespace's connections. */
export interface PublishFromEditor {
  readonly name: string;
  readonly instructions: string;
  readonly keepTools: readonly string[];
  readonly addTools?: readonly ToolSelector[];
}

export class AgentService {
  constructor(
    private readonly grants: GrantService,
    private readonly connections: ConnectionService,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  /**
   * Pins the selected tools and publishes the next version: a tool whose upstream is not an
   * inline one comes from the namespace's connection of that name.
   */
  async create(store: NamespaceStore, input: CreateAgentInput): Promise<AgentVersion> {
    const inline = input.upstreams ?? {};
    const needsConnections = (input.tools ?? []).some((selector) => inline[selector.upstream] === undefined);
    if (!needsConnections) return createAgentVersion(store, input, this.env);
    return this.connections.use(store, (manager) => createAgentVersion(store, input, this.env, {}, manager));
  }

  async publishFromEditor(store: NamespaceStore, { name, instructions, keepTools, addTools = [] }: PublishFromEditor): Promise<AgentView> {
    const latest = store.agents.find(name);
    const base: AgentSpec = latest === undefined ? { ...DEFAULT_AGENT_SPEC, instructions } : parseAgentSpec(latest.spec);
    const pinned = new Set(base.tools.map((tool) => tool.exposedName));
    const unknown = keepTools.filter((tool) => !pinned.has(tool));
    if (unknown.length > 0) {
      throw new WardError('usage', `${unknown.slice(0, 5).join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not pinned in agent ${name}; pin new tools with "ward agents create"`, {
        desktop: `${unknown.slice(0, 5).join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not pinned in agent ${name}: choose its tools ${ON_AGENTS}.`,
      });
    }
    const added = addTools.length === 0 ? [] : await this.connections.use(store, (manager) => pinConnectionTools(manager, addTools));
    const spec = parseAgentSpec({ ...base, instructions, tools: [...base.tools.filter((tool) => keepTools.includes(tool.exposedName)), ...added] });
    return this.view(store, store.agents.publish(name, spec));
  }

  /** A grant to the agent itself (every conversation with it); relative paths resolve against the home folder. */
  grant(store: NamespaceStore, name: string, effect: Effect, kind: string, entries: string): AgentView {
    // Errors speak the form ("Deny net: …"), not the flag the terminal uses.
    const rules = parseGrantList(effect, kind, entries, os.homedir(), 'agent', `${effect === 'allow' ? 'Allow' : 'Deny'} ${kind}`);
    this.grants.grant(store, { agent: name }, rules, 'desktop');
    return this.view(store, store.agents.get(name));
  }

  revokeGrant(store: NamespaceStore, name: string, grantId: string): AgentView {
    this.grants.revokeAgentGrant(store, name, grantId);
    return this.view(store, store.agents.get(name));
  }

  views(store: NamespaceStore): AgentView[] {
    return store.agents.list().map((agent) => this.view(store, agent));
  }

  view(store: NamespaceStore, agent: AgentVersion): AgentView {
    const permissions = this.grants
      .agentGrants(store, agent.agentId)
      .map((grant) => ({ id: grant.id, effect: grant.effect, kind: grant.kind, value: grant.value, grantedBy: grant.grantedBy }));
    let spec: AgentSpec;
    try {
      spec = parseAgentSpec(agent.spec);
    } catch {
      // One unreadable version must not hide the others; it cannot be run either.
      return { name: agent.agentName, version: agent.version, publishedAt: agent.publishedAt, instructions: '', modelProfile: 'default', tools: [], permissions };
    }
    return {
      permissions,
      name: agent.agentName,
      version: agent.version,
      publishedAt: agent.publishedAt,
      instructions: spec.instructions,
      modelProfile: spec.modelProfile,
      tools: spec.tools.map((tool) => ({ name: tool.exposedName, upstream: toolSource(tool), description: tool.description.slice(0, 500) })),
    };
  }
}
