import { escapeOneLine } from '../../../common/display.js';
import { auditSink } from '../../app/audit.js';
import { runBackgroundSender, type SenderOutcome } from '../../app/audit-sender.js';
import { EXIT, WardError } from '../../base/errors.js';
import { COMMON_OPTIONS, parseCommandArgs, type Command } from '../command.js';
import { writeJson, writeLine } from '../io.js';

/** What `ward audit send` says once it stops: what it sent and what still waits. */
function report(outcome: Exclude<SenderOutcome, { kind: 'no_sink' }>, waiting: { where: string; waiting: number; oldest: string | null } | null): string {
  const still = waiting === null ? '' : `; ${waiting.waiting} event(s) waiting${waiting.oldest === null ? '' : `, the oldest from ${waiting.oldest}`}`;
  if (outcome.kind === 'already_running') return `a background sender (pid ${outcome.sender.pid}, since ${outcome.sender.since}) is already sending${still}`;
  const problem = outcome.lastProblem === null ? '' : ` (stopped: ${escapeOneLine(outcome.lastProblem, 500)})`;
  return `sent ${outcome.sent} event(s) to ${waiting?.where ?? 'the audit sink'}${problem}${still}`;
}

export const auditCommand: Command = {
  name: 'audit',
  usage: 'ward audit send [--background] [--json]',
  details: [
    "Sends every namespace's waiting journal events to the admin policy's auditSink and returns once",
    'nothing waits, or at the first failure (exit 7; the events stay waiting). One sender runs per data',
    'folder: a second one says which is running and returns.',
    '--background: what a turn of `ward run` starts, at the lowest CPU priority, when it ends (or after',
    '10 s): no output; it retries with backoff and exits once nothing has waited for 30 s, or after',
    '15 minutes without delivering anything (the next turn starts it again).',
  ].join('\n'),
  async run(args, context) {
    const { values, positionals } = parseCommandArgs(this, args, { background: { type: 'boolean', default: false }, json: COMMON_OPTIONS.json });
    if (positionals.length !== 1 || positionals[0] !== 'send') throw new WardError('usage', `usage: ${this.usage}`);
    const app = context.app();
    if (auditSink(app.policy) === null) throw new WardError('invalid_config', 'the admin policy names no auditSink: events stay in the journal');
    const stop = new AbortController();
    const onSignal = () => stop.abort();
    process.once('SIGTERM', onSignal).once('SIGINT', onSignal);
    try {
      const outcome = await runBackgroundSender(app.home, () => app.startAudit(), values.background ? {} : { idleExitMs: 0, checkMs: 100, exitOnFailure: true }, stop.signal);
      if (values.background || outcome.kind === 'no_sink') return EXIT.ok;
      const waiting = app.policyView().audit ?? null;
      if (values.json) writeJson(context.io.stdout, { ...outcome, waiting: waiting?.waiting ?? null, oldest: waiting?.oldest ?? null });
      else writeLine(context.io.stdout, report(outcome, waiting));
      return outcome.kind === 'done' && outcome.lastProblem !== null ? EXIT.unavailable : EXIT.ok;
    } finally {
      process.off('SIGTERM', onSignal).off('SIGINT', onSignal);
    }
  },
};
