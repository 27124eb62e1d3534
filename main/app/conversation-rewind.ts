/**
 * Rewinding the conversation (issue 26): the CLI session forks at the message before the one
 * rewound to, so the model no longer sees what came after it; the journal keeps every event and
 * records the rewind (`conversation_rewound`, hash-chained) with the ranges of events now shown
 * as rewound. Nothing of the CLI runs here: the conversation's next turn makes the fork
 * (`--resume OLD --fork-session --resume-session-at MESSAGE --session-id NEW`), and the session
 * forked from stays untouched on disk. Undo is a rewind to the `conversation_rewound` event: the
 * conversation goes back to the session it had before it (turns taken in the fork since are then
 * the rewound ones).
 */
import { randomUUID } from 'node:crypto';
import { journalEvent, readJournalEvent, type CliSessionState, type EventOf } from '../../common/events.js';
import { describeError, WardError } from '../base/errors.js';
import type { Namespace } from '../namespaces/namespace.js';
import { transcriptMessages } from '../runner/transcript.js';
import type { Conversation } from '../store/conversations.js';
import type { NamespaceStore } from '../store/namespace-store.js';
import type { JournalEvent } from '../store/journal.js';
import { rewindTarget, type ChangeService, type RewindOptions, type RewindReport } from './changes.js';
import { truncateText } from './runs/event-bounds.js';
import { claudeConfigDir } from './runs/workspace.js';

export type CliFork = NonNullable<CliSessionState['fork']>;
type Rewound = EventOf<'conversation_rewound'>['payload'];
type Range = Rewound['rewound'][number];

export interface ConversationRewindReport {
  /** The event rewound to (a run's first event when a run was named). */
  readonly toSeq: number;
  /** Every range of events no longer in the conversation once rewound. */
  readonly rewound: Range[];
  /** The rewind undone, when the target was a conversation rewind. */
  readonly undid: number | null;
  readonly dryRun: boolean;
  /** The journal's sequence number of the rewind's own event (null for a dry run). */
  readonly seq: number | null;
}

function latestRewind(store: NamespaceStore, conversationId: string): Rewound | null {
  const event = store.journal.latest(conversationId, ['conversation_rewound']);
  if (event === undefined) return null;
  const parsed = readJournalEvent(event.type, event.payload);
  return parsed.type === 'conversation_rewound' ? parsed.payload : null;
}

/** The events the conversation was rewound past (none when it never was). */
export function latestRewound(store: NamespaceStore, conversationId: string): Range[] {
  return latestRewind(store, conversationId)?.rewound ?? [];
}

/** The fork the conversation's next turn makes, when it was rewound and has not run since. */
export function pendingFork(store: NamespaceStore, conversation: Conversation): CliFork | null {
  if (conversation.sessionStarted) return null;
  const latest = latestRewind(store, conversation.id);
  return latest !== null && latest.after.sessionId === conversation.cliSessionId ? latest.after.fork : null;
}

/** Adds [from, to] to sorted, disjoint ranges. */
function withRange(ranges: readonly Range[], added: Range): Range[] {
  const all = [...ranges, added].sort((a, b) => a.from - b.from);
  const merged: Range[] = [];
  for (const range of all) {
    const last = merged.at(-1);
    if (last !== undefined && range.from <= last.to + 1) merged[merged.length - 1] = { from: last.from, to: Math.max(last.to, range.to) };
    else merged.push(range);
  }
  return merged;
}

const inRanges = (ranges: readonly Range[], seq: number) => ranges.some((range) => seq >= range.from && seq <= range.to);

/** What a rewind changes: the session after it and the ranges shown as rewound. */
interface RewindStep {
  readonly after: CliSessionState;
  readonly rewound: Range[];
  readonly undid: number | null;
}

export class ConversationRewind {
  /** @param discardWarm closes a CLI kept warm for the conversation: its memory holds the messages rewound. */
  constructor(
    private readonly home: () => string,
    private readonly changes: ChangeService,
    private readonly discardWarm: (namespace: Namespace, conversationId: string) => Promise<void>,
  ) {}

  /** The conversation's CLI session before `to` (a run or an event's number); a conversation rewind named is undone. */
  async rewind(store: NamespaceStore, conversationRef: string, to: string, options: { readonly dryRun?: boolean } = {}): Promise<ConversationRewindReport> {
    const conversation = store.conversations.resolve(conversationRef);
    const active = store.runs.activeFor(conversation.id);
    if (active !== undefined) throw new WardError('conversation_busy', `conversation ${conversation.id} has a ${active.state} run (${active.id}): rewind once it has finished`);
    const toSeq = rewindTarget(store, conversation.id, to);
    const step = this.step(store, conversation, toSeq);
    const report = { toSeq, rewound: step.rewound, undid: step.undid, dryRun: options.dryRun === true };
    if (options.dryRun === true) return { ...report, seq: null };
    const before: CliSessionState = { sessionId: conversation.cliSessionId, started: conversation.sessionStarted, fork: pendingFork(store, conversation) };
    const payload = { id: randomUUID(), toSeq, before, after: step.after, rewound: step.rewound, undid: step.undid };
    const seq = store.db.transaction(() => {
      const [event] = store.journal.appendMany(conversation.id, [journalEvent('conversation_rewound', payload)]);
      store.conversations.switchSession(conversation.id, step.after.sessionId, step.after.started);
      return event!.seq;
    })();
    await this.discardWarm(store.namespace, conversation.id);
    return { ...report, seq };
  }

  /**
   * Files and conversation to before `to`: what the conversation rewind needs is checked first,
   * then the files are rewound (a conflict refuses it, and nothing has changed), then the conversation.
   */
  async rewindBoth(store: NamespaceStore, conversationRef: string, to: string, options: RewindOptions = {}): Promise<{ files: RewindReport; conversation: ConversationRewindReport }> {
    await this.rewind(store, conversationRef, to, { dryRun: true });
    const files = this.changes.rewindFiles(store, conversationRef, to, options);
    if (files.dryRun) return { files, conversation: await this.rewind(store, conversationRef, to, { dryRun: true }) };
    return { files, conversation: await this.rewind(store, conversationRef, to) };
  }

  private step(store: NamespaceStore, conversation: Conversation, toSeq: number): RewindStep {
    const events = [...store.journal.read(conversation.id, 0)];
    const lastSeq = events.at(-1)?.seq ?? 0;
    const target = events.find((event) => event.seq === toSeq)!;
    const parsed = readJournalEvent(target.type, target.payload);
    if (parsed.type === 'conversation_rewound') {
      // Undo: the session before that rewind, and what was rewound then; what came after it is rewound now.
      const earlier = events.filter((event) => event.type === 'conversation_rewound' && event.seq < toSeq).at(-1);
      const earlierRanges = earlier === undefined ? [] : (readJournalEvent(earlier.type, earlier.payload) as EventOf<'conversation_rewound'>).payload.rewound;
      return { after: parsed.payload.before, rewound: withRange(earlierRanges, { from: toSeq, to: lastSeq }), undid: toSeq };
    }
    const ranges = latestRewound(store, conversation.id);
    // A rewind to an event inside a run rewinds the whole run: the CLI's session holds whole turns.
    const from = target.runId === null ? toSeq : (store.journal.firstSeqOfRun(conversation.id, target.runId) ?? toSeq);
    const prompts = events.filter((event) => event.type === 'user_prompt' && !inRanges(ranges, event.seq));
    const index = prompts.findIndex((event) => event.seq >= from);
    if (index < 0) throw new WardError('usage', `nothing to rewind: conversation ${conversation.id} has no message at or after event #${from} that is not rewound already`);
    const after = this.forkBefore(store, conversation, prompts, index);
    return { after, rewound: withRange(ranges, { from, to: lastSeq }), undid: null };
  }

  /** The session that holds the conversation up to the message before prompt `index` of the live prompts. */
  private forkBefore(store: NamespaceStore, conversation: Conversation, prompts: readonly JournalEvent[], index: number): CliSessionState {
    const fresh: CliSessionState = { sessionId: randomUUID(), started: false, fork: null };
    if (index === 0) return fresh;
    // A rewound conversation that has not run since still lives in the session it will fork.
    const pending = pendingFork(store, conversation);
    const base = pending === null ? { sessionId: conversation.cliSessionId, until: null } : { sessionId: pending.fromSessionId, until: pending.atMessage };
    let messages;
    try {
      messages = transcriptMessages(claudeConfigDir(this.home(), store.namespace, conversation.id), base.sessionId, base.until);
    } catch (error) {
      throw new WardError('not_found', `the conversation cannot be rewound: ${describeError(error)}`);
    }
    // Prompts the CLI never recorded (a turn refused before it started) are not in its transcript:
    // match by text (as the journal bounds it), in order.
    const textOf = (event: JournalEvent) => (event.payload as { text: string }).text;
    const wanted = textOf(prompts[index]!);
    const occurrence = prompts.slice(0, index + 1).filter((event) => textOf(event) === wanted).length;
    let seen = 0;
    const at = messages.findIndex((message) => message.prompt !== null && truncateText(message.prompt) === wanted && ++seen === occurrence);
    if (at < 0) throw new WardError('not_found', `the conversation cannot be rewound: the CLI's session ${base.sessionId} does not hold that message`);
    if (at === 0) return fresh;
    return { sessionId: fresh.sessionId, started: false, fork: { fromSessionId: base.sessionId, atMessage: messages[at - 1]!.uuid } };
  }
}
