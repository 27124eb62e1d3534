import { COMMON_OPTIONS, parseCommandArgs, requirePositional, type Command } from '../command.js';
import { EXIT } from '../../base/errors.js';
import { writeJson, writeLine } from '../io.js';

export const verifyCommand: Command = {
  name: 'verify',
  summary: "check a conversation's hash chain; names the first altered or missing event",
  usage: 'ward verify CONVERSATION [--namespace NS] [--json]',
  async run(args, { io, app }) {
    const { values, positionals } = parseCommandArgs(this, args, { namespace: COMMON_OPTIONS.namespace, json: COMMON_OPTIONS.json });
    const store = app().namespaces.fromFlag(values.namespace);
    const conversation = store.conversations.resolve(requirePositional(this, positionals, 0, 'a conversation id'));
    const result = store.journal.verify(conversation.id);
    if (values.json) writeJson(io.stdout, { conversation: conversation.id, ...result });
    else if (result.ok) writeLine(io.stdout, `ok: ${result.count} events, hash chain intact`);
    else writeLine(io.stdout, `TAMPERED: first bad event is #${result.firstBadSeq}: ${result.reason}`);
    return result.ok ? EXIT.ok : EXIT.verifyFailed;
  },
};
