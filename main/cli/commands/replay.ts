import { EXIT } from '../../base/errors.js';
import { COMMON_OPTIONS, parseCommandArgs, parseWholeNumber, requirePositional, type Command } from '../command.js';
import { EventPrinter } from '../format-event.js';
import { writeJson, writeLine } from '../io.js';

export const replayCommand: Command = {
  name: 'replay',
  usage: 'ward replay CONVERSATION [--from SEQ] [--namespace NS] [--json]',
  async run(args, { io, app }) {
    const { values, positionals } = parseCommandArgs(this, args, { ...COMMON_OPTIONS, from: { type: 'string' } });
    // Reading changes nothing: the database is opened read-only (no migration, no run marked uncertain).
    const store = app().namespaces.readOnly(values.namespace);
    const conversation = requirePositional(this, positionals, 0, 'a conversation id');
    // --from SEQ starts at SEQ itself: the cursor is the event before it.
    const from = parseWholeNumber(values.from, '--from', 'a sequence number (0 or more)');
    const printer = new EventPrinter((line) => writeLine(io.stdout, line), from <= 1);
    for (const event of app().conversations.events(store, conversation, Math.max(0, from - 1)).events) {
      // --json is the journal as stored (with its hashes), for machines; the text form is read by schema.
      if (values.json) writeJson(io.stdout, event);
      else printer.push(event);
    }
    printer.finish();
    return EXIT.ok;
  },
};
