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
    let partial: JournalEvent[] = [];
    const flushPartial = (): void => {
      if (partial.length === 0) return;
      const text = partial.map((delta) => String((delta.payload as { text?: unknown }).text ?? '')).join('');
      writeLine(io.stdout, formatEvent({ ...partial[0]!, payload: { text } }));
      partial = [];
    };
    for (const event of store.journal.read(conversation.id, Math.max(0, from - 1))) {
      if (values.json) writeJson(io.stdout, event);
      else if (event.type === 'assistant_delta') partial.push(event);
      else {
        if (event.type === 'assistant_text') partial = [];
        flushPartial();
        writeLine(io.stdout, formatEvent(event));
      }
    }
    flushPartial();
    return EXIT.ok;
  },
};
