/**
 * Conversations and their journal: list, create, reconcile an uncertain run (R8), and the feed a
 * window or terminal follows (J1: replay from a cursor, then live appends). Everything returned
 * here may reach the renderer, so each journal event leaves parsed by its schema (C3, U3): only
 * the fields the schema names, redacted per field (common/events.ts); an event that does not
 * parse leaves as `unreadable`, without its payload.
 */
import type { ConversationView, FolderAccess, JournalEventView, RunView } from '../../common/views.js';
import { journalEvent, readJournalEvent } from '../../common/events.js';
import { GrantStore } from '../permissions/grant-store.js';
import type { Rule } from '../permissions/grants.js';
import type { JournalEvent } from '../store/journal.js';
import type { NamespaceStore } from '../store/namespace-store.js';
import type { Run, RunState } from '../store/runs.js';
import type { GrantService } from './grants.js';
import type { RunHandle, RunService } from './runs/run-service.js';
import { checkWorkspace } from './runs/workspace.js';
import { assertOutsideWardData } from './ward-data.js';

/** Events delivered per message: big replays go in pages so one push never holds the whole journal. */
const PAGE = 1_000;
/** The first replay page is small: it is all a window needs to paint. */
const FIRST_PAGE = 100;
/** A session list's preview of the latest prompt or answer. */
const PREVIEW_CHARS = 160;

/** A new chat's project folder and what it may do there without asking. */
export type { JournalEvent } from '../store/journal.js';

/** What the desktop's New chat sends: the agent, the first prompt, a request id and the project folder, if one was chosen. */
export interface NewChat {
  readonly agentName: string;
  readonly prompt: string;
  readonly requestId: string;
  readonly project?: ProjectFolder;
}

export interface ProjectFolder {
  readonly workspace: string;
  readonly access: FolderAccess;
}

export interface ConversationDeps {
  readonly home: () => string;
  readonly grants: () => GrantService;
}
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
  constructor(private readonly deps: ConversationDeps) {}

  view(store: NamespaceStore, id: string): ConversationView {
    const conversation = store.conversations.get(id);
    const active = store.runs.activeFor(id);
    let agentName = conversation.agentId;
    try {
      agentName = store.agents.getById(conversation.agentId, conversation.agentVersion).agentName;
    } catch {
      // A conversation always references a published version; keep the id if that ever fails.
    }
    const latest = store.journal.latest(id, ['user_prompt', 'assistant_text']);
    const grants = new GrantStore(store.db)
      .list({ conversationId: id })
      .filter((grant) => grant.scope === 'conversation' && grant.conversationId === id)
      .map((grant) => ({ id: grant.id, effect: grant.effect, kind: grant.kind, value: grant.value, grantedBy: grant.grantedBy }));
    return {
      id: conversation.id,
      title: conversation.title,
      agentName,
      agentVersion: conversation.agentVersion,
      createdAt: conversation.createdAt,
      lastSeq: conversation.lastSeq,
      workspace: conversation.workspace,
      lastActivityAt: store.journal.lastEventAt(id) ?? conversation.createdAt,
      preview: latest === undefined ? '' : previewOf(readJournalEvent(latest.type, latest.payload)),
      grants,
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

  /**
   * New chat: a conversation and its first turn, in one step, as `ward run --new` starts one (one
   * default-agent step, one title, one preflight). The project folder the person chose (outside
   * Ward's data) is the chat's workspace; what the chat may do there unasked becomes its own
   * grants, checked like any before anything is made (P1, P5). The same request id attaches to
   * what the first request made (R7): a retried New chat makes one conversation.
   */
  async start(runs: RunService, store: NamespaceStore, chat: NewChat): Promise<RunHandle> {
    const workspace = chat.project === undefined ? undefined : checkWorkspace(chat.project.workspace);
    if (workspace !== undefined) assertOutsideWardData(this.deps.home(), 'the project folder', workspace);
    const rules: Rule[] =
      workspace === undefined || chat.project?.access === 'ask'
        ? []
        : (chat.project?.access === 'write' ? (['read', 'write'] as const) : (['read'] as const)).map((kind) => ({ effect: 'allow', kind, value: workspace, source: 'conversation' }));
    const grants = this.deps.grants();
    grants.check(rules);
    return runs.start({
      namespace: store.namespace,
      agent: chat.agentName,
      prompt: chat.prompt,
      requestId: chat.requestId,
      ...(workspace === undefined ? {} : { workspace }),
      onNewConversation: (conversationId) => {
        if (rules.length > 0) grants.grant(store, { conversation: conversationId }, rules, 'desktop:project-folder');
      },
    });
  }

  /** A conversation's events after `afterSeq` as stored (with their hashes), for `ward replay`; a unique id prefix names it. */
  events(store: NamespaceStore, conversationRef: string, afterSeq: number): { conversationId: string; events: Iterable<JournalEvent> } {
    const { id } = store.conversations.resolve(conversationRef);
    return { conversationId: id, events: store.journal.read(id, afterSeq) };
  }

  /** Hears each event of the conversation committed after `cursor`, as it is committed (this process's runs). Returns stop(). */
  subscribe(store: NamespaceStore, conversationId: string, cursor: number, listener: (event: JournalEvent) => void): () => void {
    return store.journal.subscribe(conversationId, cursor, listener);
  }

  /** R8: a person settles an uncertain run after checking what its tool calls did; this frees the conversation. */
  reconcile(store: NamespaceStore, runId: string, outcome: RunState, note: string): Run {
    const run = store.runs.reconcile(runId, outcome, note);
    store.journal.append(run.conversationId, { ...journalEvent('run_reconciled', { state: run.state, note: note.slice(0, 500) }), runId: run.id });
    return run;
  }

  /** Where a feed that starts with the newest `tail` events cuts the journal: they are the events after it. */
  tailFrom(store: NamespaceStore, conversationId: string, afterSeq: number, tail: number): number {
    return Math.max(afterSeq, store.journal.lastSeq(conversationId) - tail);
  }

  /**
   * Replays from the cursor in pages, one per tick, so a window paints the first page while the
   * rest is still being read; then follows live appends from wherever the replay ended (J1).
   * With `tailFrom` (see tailFrom()), the events after it come first, so a window opens at the
   * latest message; live appends follow them, and the history up to `tailFrom` is replayed
   * behind, in pages. Live events are coalesced per tick (the run loop appends in bursts).
   * Returns stop().
   */
  follow(store: NamespaceStore, conversationId: string, afterSeq: number, listener: FeedListener, tailFrom: number | null = null): () => void {
    store.conversations.get(conversationId);
    let stopped = false;
    let unsubscribe: (() => void) | undefined;
    const deliver = (events: JournalEventView[]) => {
      if (events.length > 0 && !stopped) listener.events(events);
    };
    /** Replays (from, to] a page per tick, then calls `done` with the last seq replayed. */
    const replay = (from: number, to: number, firstPage: number, done: (cursor: number) => void) => {
      const history = store.journal.read(conversationId, from, PAGE);
      let cursor = from;
      let pageSize = firstPage;
      const replayPage = () => {
        if (stopped) return;
        const page: JournalEventView[] = [];
        try {
          while (page.length < pageSize) {
            const next = history.next();
            if (next.done || next.value.seq > to) break;
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
        if (page.length === pageSize && cursor < to) {
          pageSize = PAGE;
          setImmediate(replayPage);
        } else done(cursor);
      };
      replayPage();
    };
    const followLive = (cursor: number) => {
      if (stopped) return;
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
    if (tailFrom === null || tailFrom <= afterSeq) {
      setImmediate(() => replay(afterSeq, Number.MAX_SAFE_INTEGER, FIRST_PAGE, followLive));
    } else {
      setImmediate(() =>
        replay(tailFrom, Number.MAX_SAFE_INTEGER, PAGE, (cursor) => {
          followLive(cursor);
          replay(afterSeq, tailFrom, PAGE, () => undefined);
        }),
      );
    }
    return () => {
      stopped = true;
      unsubscribe?.();
    };
  }
}

/** One line of a prompt or answer for a session list (an unreadable one shows nothing). */
function previewOf(event: ReturnType<typeof readJournalEvent>): string {
  const text = event.type === 'user_prompt' || event.type === 'assistant_text' ? event.payload.text : '';
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > PREVIEW_CHARS ? `${line.slice(0, PREVIEW_CHARS - 1)}…` : line;
}
