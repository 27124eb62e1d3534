import { EXIT, WardError } from '../../base/errors.js';
import { parsePermissionFlags, splitPermissionArgs, type AuditRecord, type GrantTarget, type StoredGrant } from '../../app/grants.js';
import type { WardApp } from '../../app/ward-app.js';
import { COMMON_OPTIONS, parseCommandArgs, requirePositional, type Command } from '../command.js';
import { escapeForDisplay } from '../../../common/display.js';
import { writeJson, writeLine, type CliIo } from '../io.js';

const USAGE = [
  'ward permissions [--conversation ID] [--all] [--namespace NS] [--json]',
  '       ward permissions revoke GRANT_ID... | --conversation ID  [--namespace NS]',
  '       ward permissions grant (--conversation ID | --agent NAME | --defaults) --allow-KIND=LIST... [--deny-KIND=LIST...] [--confirm-secret-env] [--namespace NS]',
].join('\n');

/** What a file deny reaches when: a turn's sandbox fixes its file view when the turn starts. */
const FILE_DENY_TIMING =
  "note: Read, Write, Edit and the searches honour a file deny at once, in a turn already running too; Bash and every other process of a running turn keep the file view the turn started with, so the deny reaches them from the next turn";

/** An agent's name by its id, for grant lines (agents are known to people by name). */
type AgentNames = (agentId: string) => string;

function grantLine(grant: StoredGrant, agentName: AgentNames): string {
  const scope = grant.scope === 'conversation' ? `conversation ${grant.conversationId!.slice(0, 8)}` : grant.scope === 'agent' ? `agent ${agentName(grant.agentId!)}` : 'namespace';
  const revoked = grant.revokedAt === null ? '' : `  [revoked ${grant.revokedAt.slice(0, 16).replace('T', ' ')}]`;
  return `${grant.id.slice(0, 8)}  ${grant.effect.padEnd(5)} ${grant.kind.padEnd(5)} ${escapeForDisplay(grant.value, 120)}  (${scope}, ${grant.grantedBy}, ${grant.createdAt.slice(0, 16).replace('T', ' ')})${revoked}`;
}

function decisionLine(seq: number, record: AuditRecord): string {
  const who = record.answerer.by === 'rule' ? record.answerer.rule : record.answerer.by === 'person' ? `person: ${record.answerer.answer}` : record.answerer.by;
  return `#${seq} ${record.at.slice(11, 19)} ${record.decision.toUpperCase().padEnd(5)} ${escapeForDisplay(`${record.tool} ${record.kind ?? '-'} ${record.value ?? ''}`, 160)}  by ${escapeForDisplay(who, 120)}`;
}

function show(args: readonly string[], io: CliIo, app: WardApp): number {
  const { values } = parseCommandArgs(
    { usage: USAGE },
    args,
    { ...COMMON_OPTIONS, conversation: { type: 'string' }, all: { type: 'boolean', default: false } },
    false,
  );
  const store = app.namespaces.fromFlag(values.namespace);
  const names = app.agentCatalog.names(store);
  if (values.conversation === undefined) {
    const grants = app.grants.list(store, { includeRevoked: values.all });
    if (grants.length === 0 && !values.json) writeLine(io.stdout, `no ${values.all ? '' : 'active '}grants in namespace ${store.namespace.name}; add some with "ward --namespace ${store.namespace.name} permissions grant"`);
    for (const grant of grants) {
      if (values.json) writeJson(io.stdout, { type: 'grant', ...grant });
      else writeLine(io.stdout, grantLine(grant, names));
    }
    return EXIT.ok;
  }
  const held = app.grants.held(store, values.conversation, values.all);
  if (!values.json) writeLine(io.stdout, `grants held by conversation ${held.conversationId} (${held.grants.length + held.pinned.length}):`);
  for (const value of held.pinned) {
    if (values.json) writeJson(io.stdout, { type: 'pinned', effect: 'allow', kind: 'mcp', value, agent: held.agent.name, agentVersion: held.agent.version });
    else writeLine(io.stdout, `  ${'pinned'.padEnd(8)}  allow mcp   ${escapeForDisplay(value, 120)}  (pinned in agent ${held.agent.name}@${held.agent.version})`);
  }
  for (const grant of held.grants) {
    if (values.json) writeJson(io.stdout, { type: 'grant', ...grant });
    else writeLine(io.stdout, `  ${grantLine(grant, names)}`);
  }
  if (!values.json) writeLine(io.stdout, 'decisions:');
  for (const { seq, runId, record } of app.grants.decisions(store, held.conversationId)) {
    if (values.json) writeJson(io.stdout, { type: 'decision', seq, runId, ...record });
    else writeLine(io.stdout, `  ${decisionLine(seq, record)}`);
  }
  return EXIT.ok;
}

function revoke(args: readonly string[], io: CliIo, app: WardApp): number {
  const { values, positionals } = parseCommandArgs({ usage: USAGE }, args, { namespace: COMMON_OPTIONS.namespace, conversation: { type: 'string' } });
  const store = app.namespaces.fromFlag(values.namespace);
  if (values.conversation !== undefined) {
    if (positionals.length > 0) throw new WardError('usage', `give grant ids or --conversation, not both\nusage: ${USAGE}`);
    const { conversationId, revoked } = app.grants.revokeConversation(store, values.conversation);
    writeLine(io.stdout, `revoked ${revoked} grant(s) of conversation ${conversationId}`);
    return EXIT.ok;
  }
  requirePositional({ usage: USAGE }, positionals, 0, 'a grant id (see "ward permissions")');
  for (const id of positionals) writeLine(io.stdout, `revoked ${grantLine(app.grants.revoke(store, id), app.agentCatalog.names(store))}`);
  return EXIT.ok;
}

function grant(args: readonly string[], io: CliIo, app: WardApp): number {
  const { permissionArgs, otherArgs } = splitPermissionArgs(args);
  const { values } = parseCommandArgs(
    { usage: USAGE },
    otherArgs,
    {
      namespace: COMMON_OPTIONS.namespace,
      conversation: { type: 'string' },
      agent: { type: 'string' },
      defaults: { type: 'boolean', default: false },
      'confirm-secret-env': { type: 'boolean', default: false },
    },
    false,
  );
  const targets = [values.conversation !== undefined, values.agent !== undefined, values.defaults].filter(Boolean).length;
  if (targets !== 1) throw new WardError('usage', `give exactly one of --conversation, --agent or --defaults (every conversation in the namespace)\nusage: ${USAGE}`);
  if (permissionArgs.length === 0) throw new WardError('usage', `give at least one --allow-KIND=LIST or --deny-KIND=LIST\nusage: ${USAGE}`);
  const rules = parsePermissionFlags(permissionArgs, process.cwd());
  const store = app.namespaces.fromFlag(values.namespace);
  const target: GrantTarget = values.conversation !== undefined ? { conversation: values.conversation } : values.agent !== undefined ? { agent: values.agent } : { defaults: true };
  for (const granted of app.grants.grant(store, target, rules, 'cli', values['confirm-secret-env'])) writeLine(io.stdout, `granted ${grantLine(granted, app.agentCatalog.names(store))}`);
  if (rules.some((rule) => rule.effect === 'deny' && (rule.kind === 'read' || rule.kind === 'write'))) writeLine(io.stdout, FILE_DENY_TIMING);
  return EXIT.ok;
}

export const permissionsCommand: Command = {
  name: 'permissions',
  usage: USAGE,
  async run(args, { io, app }) {
    if (args[0] === 'revoke') return revoke(args.slice(1), io, app());
    if (args[0] === 'grant') return grant(args.slice(1), io, app());
    return show(args, io, app());
  },
};
