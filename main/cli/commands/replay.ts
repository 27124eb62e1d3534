import { readJournalEvent, type EventOf } from '../../../preload/events.js';
import { EXIT, WardError } from '../../base/errors.js';
import { COMMON_OPTIONS, parseCommandArgs, requirePositional, type Command } from '../command.js';
import type { JournalEvent } from '../../store/journal.js';
import { formatEvent } from '../format-event.js';
import { writeJson, writeLine } from '../io.js';

export function parseSeq(value: string | undefined, flag: string): number {
  if (value === undefined) return 0;
  if (!/^\d{1,15}$/.test(value)) throw new WardError('usage', `${flag} takes a sequence number (0 or more), not ${JSON.stringify(value.slice(0, 20))}`);
  return Number(value);
}

export const replayCommand: Command = {
  name: 'replay',
  summary: "print a conversation's journal, from a sequence number on",
  usage: 'ward replay CONVERSATION [--from SEQ] [--namespace NS] [--json]',
  async run(args, { io, app }) {
    const { values, positionals } = parseCommandArgs(this, args, { ...COMMON_OPTIONS, from: { type: 'string' } });
    const store = app().namespaces.fromFlag(values.namespace);
    const conversation = store.conversations.resolve(requirePositional(this, positionals, 0, 'a conversation id'));
    // --from SEQ starts at SEQ itself: the cursor is the event before it.
    const from = parseSeq(values.from, '--from');
    // People read streamed text once: deltas are shown only when no assistant_text completes them
    // (a turn stopped mid-answer), joined into one line.
    let partial: { first: JournalEvent; deltas: EventOf<'assistant_delta'>[] } | null = null;
    const flushPartial = (): void => {
      if (partial === null) return;
      const text = partial.deltas.map((delta) => delta.payload.text).join('');
      writeLine(io.stdout, formatEvent(partial.first, { type: 'assistant_delta', payload: { text, messageIndex: partial.deltas[0]!.payload.messageIndex } }));
      partial = null;
    };
    for (const event of store.journal.read(conversation.id, Math.max(0, from - 1))) {
      // --json is the journal as stored (with its hashes), for machines; the text form is read by schema.
      if (values.json) {
        writeJson(io.stdout, event);
        continue;
      }
      const parsed = readJournalEvent(event.type, event.payload);
      if (parsed.type === 'assistant_delta') {
        partial ??= { first: event, deltas: [] };
        partial.deltas.push(parsed);
        continue;
      }
      if (parsed.type === 'assistant_text') partial = null;
      flushPartial();
      writeLine(io.stdout, formatEvent(event, parsed));
    }
    flushPartial();
    return EXIT.ok;
  },
};
