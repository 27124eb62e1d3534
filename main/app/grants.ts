/**
 * Grants a person gives outside a run (P1, P5): to a conversation, to an agent (every
 * conversation with it), or as the namespace's defaults; revoking them; and what was decided.
 * A grant the admin policy does not allow, or one that would show Ward's data, is refused.
 * The CLI (`ward permissions`) and the desktop (the agent editor) both come here.
 */
import { readJournalEvent } from '../../common/events.js';
import { parseAgentSpec, toolSource } from '../agents/spec.js';
import { WardError } from '../base/errors.js';
import { PERMISSION_DECISION_EVENT, type AuditRecord } from '../permissions/audit.js';
import { assertSecretEnvConfirmed } from '../permissions/env-grants.js';
import { GrantStore, type StoredGrant } from '../permissions/grant-store.js';
import type { Rule } from '../permissions/grants.js';
import { assertRulesAllowed, type AdminPolicy } from '../policy/policy.js';
import type { NamespaceStore } from '../store/namespace-store.js';
import { assertGrantsOutsideWardData } from './ward-data.js';
import { assertGrantsComposeWithSandbox } from '../sandbox/files.js';
import { sandboxPlatform } from '../sandbox/engine.js';

// How the adapters spell grants on the way in (`--allow-KIND=LIST`) and what they get back.
export { parsePermissionFlags, splitPermissionArgs } from '../permissions/grants.js';
export type { AuditRecord } from '../permissions/audit.js';
export type { StoredGrant } from '../permissions/grant-store.js';

/** What a conversation holds: its agent's pinned tools (granted with the agent version) and its grants. */
export interface HeldGrants {
  readonly conversationId: string;
  readonly agent: { readonly name: string; readonly version: number };
  /** `CONNECTION/TOOL` or `UPSTREAM/TOOL` of each tool pinned in the agent version. */
  readonly pinned: readonly string[];
  readonly grants: readonly StoredGrant[];
}

export type GrantTarget = { readonly conversation: string } | { readonly agent: string } | { readonly defaults: true };

export interface Decision {
  readonly seq: number;
  readonly runId: string | null;
  readonly record: AuditRecord;
}

export class GrantService {
  constructor(
    private readonly policy: AdminPolicy | null,
    private readonly home: string,
  ) {}

  /**
   * Stores each rule for the target; the admin policy is checked first (P5), so nothing is stored
   * if one is refused. An env grant that looks like a secret needs `secretEnvConfirmed`.
   */
  grant(store: NamespaceStore, target: GrantTarget, rules: readonly Rule[], grantedBy: string, secretEnvConfirmed = false): StoredGrant[] {
    this.check(rules, secretEnvConfirmed);
    const scope =
      'conversation' in target
        ? { scope: 'conversation' as const, conversationId: store.conversations.resolve(target.conversation).id }
        : 'agent' in target
          ? { scope: 'agent' as const, agentId: store.agents.get(target.agent).agentId }
          : { scope: 'namespace' as const };
    const grants = new GrantStore(store.db);
    return rules.map((rule) => grants.add({ ...scope, effect: rule.effect, kind: rule.kind, value: rule.value, grantedBy }));
  }

  /** What refuses a grant before anything is stored: the admin policy, secret-looking names, Ward's data, the sandbox. */
  check(rules: readonly Rule[], secretEnvConfirmed = false): void {
    assertRulesAllowed(this.policy, rules);
    assertSecretEnvConfirmed(rules, secretEnvConfirmed);
    assertGrantsOutsideWardData(this.home, rules);
    assertGrantsComposeWithSandbox(rules, sandboxPlatform());
  }

  revoke(store: NamespaceStore, grantId: string): StoredGrant {
    return new GrantStore(store.db).revoke(grantId);
  }

  /** Revokes one of an agent's own grants (not a conversation's or the namespace's). */
  revokeAgentGrant(store: NamespaceStore, agentName: string, grantId: string): StoredGrant {
    const agent = store.agents.get(agentName);
    const grants = new GrantStore(store.db);
    const grant = grants.list({ agentId: agent.agentId }).find((candidate) => candidate.id === grantId && candidate.scope === 'agent');
    if (grant === undefined) throw new WardError('not_found', `agent ${agentName} has no grant ${grantId}`);
    return grants.revoke(grant.id);
  }

  /** Revokes every grant of a conversation; returns how many. */
  revokeConversation(store: NamespaceStore, conversationId: string): { conversationId: string; revoked: number } {
    const conversation = store.conversations.resolve(conversationId);
    return { conversationId: conversation.id, revoked: new GrantStore(store.db).revokeConversation(conversation.id) };
  }

  list(store: NamespaceStore, filter: { conversationId?: string; agentId?: string; includeRevoked?: boolean } = {}): StoredGrant[] {
    return new GrantStore(store.db).list(filter);
  }

  /** Everything a conversation (id or unique prefix) may do unasked: pinned tools and grants, revoked ones too with `includeRevoked`. */
  held(store: NamespaceStore, conversationRef: string, includeRevoked: boolean): HeldGrants {
    const conversation = store.conversations.resolve(conversationRef);
    const agent = store.agents.getById(conversation.agentId, conversation.agentVersion);
    return {
      conversationId: conversation.id,
      agent: { name: agent.agentName, version: agent.version },
      pinned: parseAgentSpec(agent.spec).tools.map((tool) => `${toolSource(tool)}/${tool.name}`),
      grants: this.list(store, { conversationId: conversation.id, agentId: conversation.agentId, includeRevoked }),
    };
  }

  /** An agent's own live grants (what the agent editor shows). */
  agentGrants(store: NamespaceStore, agentId: string): StoredGrant[] {
    return this.list(store, { agentId }).filter((grant) => grant.scope === 'agent' && grant.revokedAt === null);
  }

  /** Every permission decision journaled in a conversation (P4). */
  *decisions(store: NamespaceStore, conversationId: string): Generator<Decision> {
    for (const event of store.journal.read(conversationId)) {
      if (event.type !== PERMISSION_DECISION_EVENT) continue;
      // Read by its schema: a record that does not match is not passed off as a decision.
      const read = readJournalEvent(event.type, event.payload);
      if (read.type === PERMISSION_DECISION_EVENT) yield { seq: event.seq, runId: event.runId, record: read.payload };
    }
  }
}
