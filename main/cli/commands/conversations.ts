import { NO_USAGE, totalTokens } from '../../../common/usage.js';
import { COMMON_OPTIONS, parseCommandArgs, type Command } from '../command.js';
import { EXIT } from '../../base/errors.js';
import { writeJson, writeLine } from '../io.js';

export const conversationsCommand: Command = {
  name: 'conversations',
  usage: 'ward conversations [--namespace NS] [--json]',
  async run(args, { io, app }) {
    const { values } = parseCommandArgs(this, args, { namespace: COMMON_OPTIONS.namespace, json: COMMON_OPTIONS.json }, false);
    const store = app().namespaces.fromFlag(values.namespace);
    const usage = app().usage.byConversation(store);
    const conversations = store.conversations.list();
    if (conversations.length === 0 && !values.json) writeLine(io.stdout, `no conversations in namespace ${store.namespace.name} yet; start one with "ward --namespace ${store.namespace.name} run -- PROMPT"`);
    for (const conversation of conversations) {
      const agent = store.agents.getById(conversation.agentId, conversation.agentVersion);
      const active = store.runs.activeFor(conversation.id);
      const row = {
        id: conversation.id,
        title: conversation.title,
        agent: agent.agentName,
        agentVersion: conversation.agentVersion,
        events: conversation.lastSeq,
        activeRun: active === undefined ? null : { id: active.id, state: active.state },
        createdAt: conversation.createdAt,
        usage: usage.get(conversation.id) ?? NO_USAGE,
      };
      const tokens = totalTokens(row.usage.tokens).toLocaleString('en-US');
      const cost = row.usage.costUsd === null ? '' : `$${row.usage.costUsd.toFixed(4)}`;
      if (values.json) writeJson(io.stdout, row);
      else writeLine(io.stdout, `${row.id}  ${row.createdAt.slice(0, 16).replace('T', ' ')}  ${`${row.agent}@${row.agentVersion}`.padEnd(16)} ${String(row.events).padStart(6)} events ${tokens.padStart(10)} tokens ${cost.padStart(9)}  ${active ? `[${active.state}] ` : ''}${row.title}`);
    }
    return EXIT.ok;
  },
};
