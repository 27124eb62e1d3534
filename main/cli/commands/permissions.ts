import { parseAgentSpec, toolSource } from '../../agents/spec.js';
import { WardError } from '../../core/errors.js';
import type { WardCore } from '../../core/ward-core.js';
import { PERMISSION_DECISION_EVENT, type AuditRecord } from '../../permissions/audit.js';
import { GrantStore, type StoredGrant } from '../../permissions/grant-store.js';
import { parsePermissionFlags, splitPermissionArgs } from '../../permissions/grants.js';
import { assertRulesAllowed, loadPolicy } from '../../policy/policy.js';
import { COMMON_OPTIONS, namespaceFrom, parseCommandArgs, requirePositional, type Command } from '../command.js';
import { EXIT } from '../exit-codes.js';
import { escapeForTerminal } from '../format-event.js';
import { writeJson, writeLine, type CliIo } from '../io.js';

const USAGE = [
  'ward permissions [--conversation ID] [--all] [--namespace NS] [--json]',
  '       ward permissions revoke GRANT_ID... | --conversation ID  [--namespace NS]',
  '       ward permissions grant (--conversation ID | --agent NAME | --defaults) --allow-KIND=LIST... [--deny-KIND=LIST...] [--namespace NS]',
].join('\n');

function grantLine(grant: StoredGrant): string {
  const scope = grant.scope === 'conversation' ? `conversation ${grant.conversationId!.slice(0, 8)}` : grant.scope === 'agent' ? `agent ${grant.agentId!.slice(0, 8)}` : 'namespace';
  const revoked = grant.revokedAt === null ? '' : `  [revoked ${grant.revokedAt.slice(0, 16).replace('T', ' ')}]`;
  return `${grant.id.slice(0, 8)}  ${grant.effect.padEnd(5)} ${grant.kind.padEnd(5)} ${escapeForTerminal(grant.value, 120)}  (${scope}, ${grant.grantedBy}, ${grant.createdAt.slice(0, 16).replace('T', ' ')})${revoked}`;
}

function decisionLine(seq: number, record: AuditRecord): string {
  const who = record.answerer.by === 'rule' ? record.answerer.rule : record.answerer.by === 'person' ? `person: ${record.answerer.answer}` : record.answerer.by;
  return `#${seq} ${record.at.slice(11, 19)} ${record.decision.toUpperCase().padEnd(5)} ${escapeForTerminal(`${record.tool} ${record.kind ?? '-'} ${record.value ?? ''}`, 160)}  by ${escapeForTerminal(who, 120)}`;
}

function show(args: readonly string[], io: CliIo, core: () => WardCore): number {
  const { values } = parseCommandArgs(
    { usage: USAGE },
    args,
    { ...COMMON_OPTIONS, conversation: { type: 'string' }, all: { type: 'boolean', default: false } },
    false,
  );
  const store = core().store(namespaceFrom(values.namespace, io), { mustExist: true });
  const grants = new GrantStore(store.db);
  if (values.conversation === undefined) {
    for (const grant of grants.list({ includeRevoked: values.all })) {
      if (values.json) writeJson(io.stdout, { type: 'grant', ...grant });
      else writeLine(io.stdout, grantLine(grant));
    }
    return EXIT.ok;
  }
  const conversation = store.conversations.resolve(values.conversation);
  const held = grants.list({ conversationId: conversation.id, agentId: conversation.agentId, includeRevoked: values.all });
  // Tools pinned in the agent version are granted to it (main/permissions/native-tools.ts pinnedToolRules).
  const agent = store.agents.getById(conversation.agentId, conversation.agentVersion);
  const pinned = parseAgentSpec(agent.spec).tools.map((tool) => `${toolSource(tool)}/${tool.name}`);
  if (!values.json) writeLine(io.stdout, `grants held by conversation ${conversation.id} (${held.length + pinned.length}):`);
  for (const value of pinned) {
    if (values.json) writeJson(io.stdout, { type: 'pinned', effect: 'allow', kind: 'mcp', value, agent: agent.agentName, agentVersion: agent.version });
    else writeLine(io.stdout, `  ${'pinned'.padEnd(8)}  allow mcp   ${escapeForTerminal(value, 120)}  (pinned in agent ${agent.agentName}@${agent.version})`);
  }
  for (const grant of held) {
    if (values.json) writeJson(io.stdout, { type: 'grant', ...grant });
    else writeLine(io.stdout, `  ${grantLine(grant)}`);
  }
  if (!values.json) writeLine(io.stdout, 'decisions:');
  for (const event of store.journal.read(conversation.id)) {
    if (event.type !== PERMISSION_DECISION_EVENT) continue;
    const record = event.payload as AuditRecord;
    if (values.json) writeJson(io.stdout, { type: 'decision', seq: event.seq, runId: event.runId, ...record });
    else writeLine(io.stdout, `  ${decisionLine(event.seq, record)}`);
  }
  return EXIT.ok;
}

function revoke(args: readonly string[], io: CliIo, core: () => WardCore): number {
  const { values, positionals } = parseCommandArgs({ usage: USAGE }, args, { namespace: COMMON_OPTIONS.namespace, conversation: { type: 'string' } });
  const store = core().store(namespaceFrom(values.namespace, io), { mustExist: true });
  const grants = new GrantStore(store.db);
  if (values.conversation !== undefined) {
    if (positionals.length > 0) throw new WardError('usage', `give grant ids or --conversation, not both\nusage: ${USAGE}`);
    const conversation = store.conversations.resolve(values.conversation);
    writeLine(io.stdout, `revoked ${grants.revokeConversation(conversation.id)} grant(s) of conversation ${conversation.id}`);
    return EXIT.ok;
  }
  requirePositional({ usage: USAGE }, positionals, 0, 'a grant id (see "ward permissions")');
  for (const id of positionals) writeLine(io.stdout, `revoked ${grantLine(grants.revoke(id))}`);
  return EXIT.ok;
}

function grant(args: readonly string[], io: CliIo, core: () => WardCore): number {
  const { permissionArgs, otherArgs } = splitPermissionArgs(args);
  const { values } = parseCommandArgs(
    { usage: USAGE },
    otherArgs,
    { namespace: COMMON_OPTIONS.namespace, conversation: { type: 'string' }, agent: { type: 'string' }, defaults: { type: 'boolean', default: false } },
    false,
  );
  const targets = [values.conversation !== undefined, values.agent !== undefined, values.defaults].filter(Boolean).length;
  if (targets !== 1) throw new WardError('usage', `give exactly one of --conversation, --agent or --defaults (every conversation in the namespace)\nusage: ${USAGE}`);
  if (permissionArgs.length === 0) throw new WardError('usage', `give at least one --allow-KIND=LIST or --deny-KIND=LIST\nusage: ${USAGE}`);
  const rules = parsePermissionFlags(permissionArgs, process.cwd());
  assertRulesAllowed(loadPolicy(io.env), rules);
  const store = core().store(namespaceFrom(values.namespace, io), { mustExist: true });
  const grants = new GrantStore(store.db);
  const target =
    values.conversation !== undefined
      ? { scope: 'conversation' as const, conversationId: store.conversations.resolve(values.conversation).id }
      : values.agent !== undefined
        ? { scope: 'agent' as const, agentId: store.agents.get(values.agent).agentId }
        : { scope: 'namespace' as const };
  for (const rule of rules) writeLine(io.stdout, `granted ${grantLine(grants.add({ ...target, effect: rule.effect, kind: rule.kind, value: rule.value, grantedBy: 'cli' }))}`);
  return EXIT.ok;
}

export const permissionsCommand: Command = {
  name: 'permissions',
  summary: 'show what a conversation may do and what was decided; grant or revoke',
  usage: USAGE,
  async run(args, { io, core }) {
    if (args[0] === 'revoke') return revoke(args.slice(1), io, core);
    if (args[0] === 'grant') return grant(args.slice(1), io, core);
    return show(args, io, core);
  },
};
