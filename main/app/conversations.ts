/**
 * Conversations and their journal: list, create, reconcile an uncertain run (R8), and the feed a
 * window or terminal follows (J1: replay from a cursor, then live appends). Everything returned
 * here may reach the renderer, so each journal event leaves parsed by its schema (C3, U3): only
 * the fields the schema names, redacted per field (preload/events.ts); an event that does not
 * parse leaves as `unreadable`, without its payload.
 */
import type { ConversationView, JournalEventView, RunView } from '../../preload/contract.js';
import { journalEvent, readJournalEvent } from '../../preload/events.js';
import { DEFAULT_AGENT, DEFAULT_AGENT_SPEC } from '../agents/spec.js';
import type { JournalEvent } from '../store/journal.js';
import type { NamespaceStore } from '../store/namespace-store.js';
import type { Run, RunState } from '../store/runs.js';

/** Events delivered per message: big replays go in pages so one push never holds the whole journal. */
const PAGE = 1_000;
/** The first replay page is small: it is all a window needs to paint. */
const FIRST_PAGE = 100;
export function toEventView(event: JournalEvent): JournalEventView {
  return { seq: event.seq, runId: event.runId, createdAt: event.createdAt, ...readJournalEvent(event.type, event.payload) };
}

export function toRunView(run: Run): RunView {
  return { id: run.id, state: run.state, reason: run.reason, updatedAt: run.updatedAt };
}

export interface FeedListener {
  /** A page of replayed events, or a tick's worth of live ones; in order, without gaps. */
  events(events: JournalEventView[]): void;
  /** The feed ended on its own (the store closed or broke); resubscribe to continue. */
  ended?(error: unknown): void;
}

export class ConversationService {
  view(store: NamespaceStore, id: string): ConversationView {
    const conversation = store.conversations.get(id);
    const active = store.runs.activeFor(id);
    let agentName = conversation.agentId;
    try {
      agentName = store.agents.getById(conversation.agentId, conversation.agentVersion).agentName;
    } catch {
      // A conversation always references a published version; keep the id if that ever fails.
    }
    return {
      id: conversation.id,
      title: conversation.title,
      agentName,
      agentVersion: conversation.agentVersion,
      createdAt: conversation.createdAt,
      lastSeq: conversation.lastSeq,
      activeRun: active === undefined ? null : toRunView(active),
    };
  }

  list(store: NamespaceStore, query?: string): ConversationView[] {
    const needle = query?.trim().toLowerCase() ?? '';
    return store.conversations
      .list()
      .map((conversation) => this.view(store, conversation.id))
      .filter((view) => needle === '' || view.title.toLowerCase().includes(needle) || view.agentName.includes(needle) || view.id.startsWith(needle));
  }

  create(store: NamespaceStore, agentName: string, title: string): ConversationView {
    // The built-in agent comes into being on first use, as with `ward run`.
    const agent = agentName === DEFAULT_AGENT && store.agents.find(DEFAULT_AGENT) === undefined ? store.agents.publish(DEFAULT_AGENT, DEFAULT_AGENT_SPEC) : store.agents.get(agentName);
    const conversation = store.conversations.create({ agentId: agent.agentId, agentVersion: agent.version, title });
    return this.view(store, conversation.id);
  }

  /** R8: a person settles an uncertain run after checking what its tool calls did; this frees the conversation. */
  reconcile(store: NamespaceStore, runId: string, outcome: RunState, note: string): Run {
    const run = store.runs.reconcile(runId, outcome, note);
    store.journal.append(run.conversationId, { ...journalEvent('run_reconciled', { state: run.state, note: note.slice(0, 500) }), runId: run.id });
    return run;
  }

  /**
   * Replays from the cursor in pages, one per tick, so a window paints the first page while the
   * rest is still being read; then follows live appends from wherever the replay ended (J1).
   * Live events are coalesced per tick (the run loop appends in bursts). Returns stop().
   */
  follow(store: NamespaceStore, conversationId: string, afterSeq: number, listener: FeedListener): () => void {
    store.conversations.get(conversationId);
    let stopped = false;
    let unsubscribe: (() => void) | undefined;
    const deliver = (events: JournalEventView[]) => {
      if (events.length > 0 && !stopped) listener.events(events);
    };
    const history = store.journal.read(conversationId, afterSeq, PAGE);
    let cursor = afterSeq;
    let pageSize = FIRST_PAGE;
    const replayPage = () => {
      if (stopped) return;
      const page: JournalEventView[] = [];
      try {
        while (page.length < pageSize) {
          const next = history.next();
          if (next.done) break;
          page.push(toEventView(next.value));
        }
      } catch (error) {
        // The store closed (Ward is quitting) or broke: this feed ends; the reader resubscribes on reload.
        stopped = true;
        listener.ended?.(error);
        return;
      }
      if (page.length > 0) cursor = page[page.length - 1]!.seq;
      deliver(page);
      if (page.length === pageSize) {
        pageSize = PAGE;
        setImmediate(replayPage);
      } else followLive();
    };
    const followLive = () => {
      let batch: JournalEventView[] = [];
      let scheduled = false;
      unsubscribe = store.journal.subscribe(conversationId, cursor, (event) => {
        batch.push(toEventView(event));
        if (scheduled) return;
        scheduled = true;
        setImmediate(() => {
          scheduled = false;
          const events = batch;
          batch = [];
          for (let start = 0; start < events.length; start += PAGE) deliver(events.slice(start, start + PAGE));
        });
      });
    };
    // The caller hears of the feed before its first page.
    setImmediate(replayPage);
    return () => {
      stopped = true;
      unsubscribe?.();
    };
  }
}
