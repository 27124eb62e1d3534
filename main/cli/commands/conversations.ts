import { describeTotalCost, NO_USAGE, totalTokens } from '../../../common/usage.js';
import { COMMON_OPTIONS, parseCommandArgs, type Command } from '../command.js';
import { escapeOneLine } from '../../../common/display.js';
import { EXIT } from '../../base/errors.js';
import { writeJson, writeLine } from '../io.js';

export const conversationsCommand: Command = {
  name: 'conversations',
  usage: 'ward conversations [--namespace NS] [--json]',
  async run(args, { io, app }) {
    const { values } = parseCommandArgs(this, args, { namespace: COMMON_OPTIONS.namespace, json: COMMON_OPTIONS.json }, false);
    const store = app().namespaces.fromFlag(values.namespace);
    const usage = app().usage.byConversation(store);
    const conversations = app().conversations.list(store);
    if (conversations.length === 0 && !values.json) writeLine(io.stdout, `no conversations in namespace ${store.namespace.name} yet; start one with "ward --namespace ${store.namespace.name} run -- PROMPT"`);
    // One header row over the columns below, as `ps` and `ls -l` readers expect.
    if (conversations.length > 0 && !values.json) writeLine(io.stdout, `${'ID'.padEnd(36)}  ${'CREATED (UTC)'.padEnd(16)}  ${'AGENT'.padEnd(16)} ${'EVENTS'.padStart(13)} ${'TOKENS'.padStart(17)} ${'COST'.padStart(9)}  TITLE`);
    for (const conversation of conversations) {
      const active = conversation.activeRun;
      const row = {
        id: conversation.id,
        title: conversation.title,
        agent: conversation.agentName,
        agentVersion: conversation.agentVersion,
        events: conversation.lastSeq,
        activeRun: active === null ? null : { id: active.id, state: active.state },
        createdAt: conversation.createdAt,
        usage: usage.get(conversation.id) ?? NO_USAGE,
      };
      const tokens = totalTokens(row.usage.tokens).toLocaleString('en-US');
      const cost = describeTotalCost(row.usage) ?? '';
      if (values.json) writeJson(io.stdout, row);
      else writeLine(io.stdout, `${row.id}  ${row.createdAt.slice(0, 16).replace('T', ' ')}  ${`${row.agent}@${row.agentVersion}`.padEnd(16)} ${String(row.events).padStart(6)} events ${tokens.padStart(10)} tokens ${cost.padStart(9)}  ${active ? `[${active.state}] ` : ''}${escapeOneLine(row.title, 200)}`);
    }
    return EXIT.ok;
  },
};
