import { describeTotal, describeUsage, type UsageTotal } from '../../../common/usage.js';
import { EXIT, WardError } from '../../base/errors.js';
import { COMMON_OPTIONS, parseCommandArgs, type Command } from '../command.js';
import { writeJson, writeLine } from '../io.js';

function line(label: string, usage: UsageTotal): string {
  return `${label.padEnd(10)} ${String(usage.turns).padStart(5)} turns  ${describeTotal(usage)}`;
}

export const usageCommand: Command = {
  name: 'usage',
  usage: 'ward usage [--since YYYY-MM-DD] [--runs] [--namespace NS] [--json]',
  async run(args, { io, app }) {
    const { values } = parseCommandArgs(this, args, { ...COMMON_OPTIONS, since: { type: 'string' }, runs: { type: 'boolean', default: false } }, false);
    const since = values.since;
    if (since !== undefined && (!/^\d{4}-\d{2}-\d{2}$/.test(since) || Number.isNaN(Date.parse(since)))) throw new WardError('usage', `--since takes a day as YYYY-MM-DD, not ${JSON.stringify(since.slice(0, 20))}`);
    const store = app().namespaces.readOnly(values.namespace);
    if (values.runs) {
      // In the order they happened across conversations (each conversation's are in order already; the sort is stable).
      const turns = app().usage.turns(store).sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
      for (const turn of turns) {
        if (since !== undefined && turn.at.slice(0, 10) < since) continue;
        if (values.json) writeJson(io.stdout, turn);
        else writeLine(io.stdout, `${turn.at.slice(0, 16).replace('T', ' ')}  ${turn.conversationId.slice(0, 8)}  run ${turn.runId?.slice(0, 8) ?? '-'}  ${describeUsage(turn.tokens, turn.costUsd)}`);
      }
      return EXIT.ok;
    }
    const summary = app().usage.summary(store, since);
    if (values.json) {
      for (const day of summary.days) writeJson(io.stdout, day);
      writeJson(io.stdout, { day: 'total', ...summary.total });
      return EXIT.ok;
    }
    for (const day of summary.days) writeLine(io.stdout, line(day.day, day));
    writeLine(io.stdout, line('total', summary.total));
    return EXIT.ok;
  },
};
