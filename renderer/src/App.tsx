/**
 * The window: a fixed navigation rail, the sessions of the namespace (newest activity first), and
 * the current page. Keyboard: Ctrl/Cmd+K switches sessions, Ctrl/Cmd+N starts a chat, F6 moves
 * between the panes, Escape stops a run (ChatView). One status region announces what finished
 * and which chat waits for an approval; approvals of other chats are a badge and a one-line notice.
 */
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { AgentView, ConversationView, ElicitationAction, ElicitationFieldValue, NamespaceView, PendingApprovalView, PendingElicitationView, SearchHitView, UsageSummaryView, WardApi } from '../../preload/contract.js';
import { escapeLineForWindow } from '../../common/display.js';
import { errorText, unwrap } from './api.js';
import { secondsLeft } from './components/ApprovalPrompt.js';
import { ElicitationPrompt } from './components/ElicitationPrompt.js';
import { ChatView } from './components/ChatView.js';
import { usePolicy, policySetting } from './components/ManagedLock.js';
import { NewChat } from './components/NewChat.js';
import { SessionList } from './components/SessionList.js';
import { Switcher } from './components/Switcher.js';
import { AgentsPage } from './pages/AgentsPage.js';
import { ConnectionsPage } from './pages/ConnectionsPage.js';
import { PolicyPage } from './pages/PolicyPage.js';
import { SettingsPage } from './pages/SettingsPage.js';
import { PAGES, type Page } from './pages.js';
import { PushRouter } from './state/follow.js';


/** `conversationId` "new" is a chat not started yet. */
export interface Place {
  readonly namespace: string;
  readonly page: Page;
  readonly conversationId: string | null;
}

const PLACE_KEY = 'ward.place';
/** Announced again when this little time is left to answer. */
const LAST_CALL_S = 20;

/** Where the person was, so a reload reopens the same conversation (and replays it). */
function loadPlace(): Place {
  try {
    const saved = JSON.parse(sessionStorage.getItem(PLACE_KEY) ?? 'null') as Partial<Place> | null;
    if (saved !== null && typeof saved.namespace === 'string' && PAGES.some((page) => page.id === saved.page)) {
      return { namespace: saved.namespace, page: saved.page as Page, conversationId: typeof saved.conversationId === 'string' ? saved.conversationId : null };
    }
  } catch {
    // A damaged entry just means starting fresh.
  }
  return { namespace: 'default', page: 'chats', conversationId: null };
}

const titleOf = (conversations: readonly ConversationView[], id: string | null) => {
  const found = conversations.find((conversation) => conversation.id === id);
  return found === undefined ? 'another chat' : escapeLineForWindow(found.title, 80);
};

/** The panes F6 cycles through, in order. */
const PANES = ['.rail', '.sidebar', '.vlist, .page, .chat-empty', '.composer textarea'];

export function App({ api }: { api: WardApi }) {
  const router = useMemo(() => new PushRouter(api), [api]);
  const policy = usePolicy(api);
  useEffect(() => () => router.close(), [router]);
  const [place, setPlace] = useState<Place>(loadPlace);
  const [namespaces, setNamespaces] = useState<NamespaceView[]>([]);
  const [conversations, setConversations] = useState<ConversationView[]>([]);
  const [agents, setAgents] = useState<AgentView[]>([]);
  const [query, setQuery] = useState('');
  const [approvals, setApprovals] = useState<readonly PendingApprovalView[]>([]);
  const [elicitations, setElicitations] = useState<readonly PendingElicitationView[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [listTick, setListTick] = useState(0);
  const [switcherOpen, setSwitcherOpen] = useState(false);
  const [newChatKey, setNewChatKey] = useState(0);
  const [chatTitle, setChatTitle] = useState<string | null>(null);
  const [announcement, setAnnouncement] = useState('');
  const [hits, setHits] = useState<readonly SearchHitView[]>([]);
  const [searchProblem, setSearchProblem] = useState<string | null>(null);
  /** A search hit the chat brings into view. */
  const [focus, setFocus] = useState<{ conversationId: string; seq: number } | null>(null);
  const [today, setToday] = useState<UsageSummaryView['total'] | null>(null);

  const go = useCallback((next: Partial<Place>) => setPlace((current) => ({ ...current, ...next })), []);
  useEffect(() => sessionStorage.setItem(PLACE_KEY, JSON.stringify(place)), [place]);
  const fail = (failure: unknown) => setError(errorText(failure));
  const announce = useCallback((text: string) => setAnnouncement((current) => (current === text ? `${text}\u00a0` : text)), []);

  useEffect(() => {
    unwrap(api.namespaces.list({}))
      .then((list) => {
        setNamespaces(list);
        // A saved place in a namespace this Ward does not offer (fixed by policy) moves to one it does.
        setPlace((current) => (list.length > 0 && !list.some((ns) => ns.name === current.namespace) ? { ...current, namespace: list[0]!.name, conversationId: null } : current));
      })
      .catch(fail);
  }, [api]);

  // Nothing is asked of a namespace before main has said it is one this Ward offers.
  const ready = namespaces.some((ns) => ns.name === place.namespace);

  useEffect(() => {
    if (!ready) return;
    const timer = setTimeout(() => {
      unwrap(api.conversations.list({ namespace: place.namespace, ...(query.trim() === '' ? {} : { query: query.trim() }) }))
        .then((list) => setConversations([...list].sort((a, b) => (a.lastActivityAt < b.lastActivityAt ? 1 : a.lastActivityAt > b.lastActivityAt ? -1 : 0))))
        .catch(fail);
    }, 120);
    return () => clearTimeout(timer);
  }, [api, ready, place.namespace, query, listTick]);

  // Words in prompts, answers and tools, across the namespace's sessions (full-text search in main).
  useEffect(() => {
    const text = query.trim();
    if (!ready || text === '') {
      setHits([]);
      setSearchProblem(null);
      return;
    }
    const timer = setTimeout(() => {
      unwrap(api.search.query({ namespace: place.namespace, query: text }))
        .then((found) => {
          setHits(found);
          setSearchProblem(null);
        })
        .catch((failure: unknown) => {
          setHits([]);
          setSearchProblem(errorText(failure));
        });
    }, 200);
    return () => clearTimeout(timer);
  }, [api, ready, place.namespace, query]);

  useEffect(() => {
    if (!ready) return;
    unwrap(api.usage.summary({ namespace: place.namespace, since: new Date().toISOString().slice(0, 10) }))
      .then((summary) => setToday(summary.total))
      .catch(fail);
  }, [api, ready, place.namespace, listTick]);

  useEffect(() => {
    if (!ready) return;
    unwrap(api.agents.list({ namespace: place.namespace }))
      .then(setAgents)
      .catch(fail);
  }, [api, ready, place.namespace, place.page]);

  useEffect(() => {
    if (!ready) return;
    let cancelled = false;
    let unroute: (() => void) | null = null;
    setApprovals([]);
    setElicitations([]);
    unwrap(api.approvals.watch({ namespace: place.namespace }))
      .then(({ subscriptionId }) => {
        if (cancelled) return router.forget(subscriptionId);
        unroute = router.route(subscriptionId, (pushed) => {
          if (pushed.kind !== 'approvals') return;
          setApprovals(pushed.pending);
          setElicitations(pushed.elicitations);
        });
      })
      .catch(fail);
    return () => {
      cancelled = true;
      unroute?.();
    };
  }, [api, router, ready, place.namespace]);

  // Each new approval is announced once, and once more near its end.
  const announced = useRef(new Map<string, 'asked' | 'last-call'>());
  useEffect(() => {
    const check = () => {
      for (const approval of approvals) {
        const said = announced.current.get(approval.id);
        const where = titleOf(conversations, approval.conversationId);
        if (said === undefined) {
          announced.current.set(approval.id, 'asked');
          announce(`Approval needed in “${where}”: agent ${approval.agent} ${approval.summary}`);
        } else if (said === 'asked' && secondsLeft(approval.expiresAt, Date.now()) <= LAST_CALL_S) {
          announced.current.set(approval.id, 'last-call');
          announce(`${LAST_CALL_S} seconds left to answer the approval in “${where}”`);
        }
      }
    };
    check();
    if (approvals.length === 0) return;
    const timer = setInterval(check, 1_000);
    return () => clearInterval(timer);
  }, [approvals, conversations, announce]);

  const refreshList = useCallback(() => setListTick((tick) => tick + 1), []);
  const openLink = useCallback(
    (url: string) => {
      unwrap(api.links.openExternal({ url })).catch(fail);
    },
    [api],
  );
  const newChat = useCallback(() => {
    setNewChatKey((key) => key + 1);
    go({ page: 'chats', conversationId: 'new' });
  }, [go]);

  // The window title names the chat (or the page).
  const pageLabel = PAGES.find((page) => page.id === place.page)!.label;
  const windowTitle = place.page !== 'chats' ? pageLabel : place.conversationId === 'new' ? 'New chat' : place.conversationId === null ? 'Chats' : (chatTitle ?? 'Chat');
  useEffect(() => {
    document.title = `${windowTitle} — Ward`;
  }, [windowTitle]);

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const mod = event.ctrlKey || event.metaKey;
      if (mod && !event.shiftKey && !event.altKey && event.key.toLowerCase() === 'k') {
        event.preventDefault();
        setSwitcherOpen(true);
      } else if (mod && !event.shiftKey && !event.altKey && event.key.toLowerCase() === 'n') {
        event.preventDefault();
        newChat();
      } else if (event.key === 'F6' && document.querySelector('dialog[open]') === null) {
        event.preventDefault();
        const panes = PANES.map((selector) => document.querySelector<HTMLElement>(selector)).filter((pane): pane is HTMLElement => pane !== null);
        if (panes.length === 0) return;
        const now = panes.findIndex((pane) => pane.contains(document.activeElement));
        const next = panes[(now + (event.shiftKey ? panes.length - 1 : 1)) % panes.length]!;
        const target = next.matches('textarea, [tabindex]') ? next : (next.querySelector<HTMLElement>('button, [href], input, select, textarea, [tabindex]:not([tabindex="-1"])') ?? next);
        target.focus();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [newChat]);

  const open = place.page === 'chats' ? place.conversationId : null;
  const elsewhere = approvals.filter((approval) => approval.conversationId === null || approval.conversationId !== open);
  const elicitationsElsewhere = elicitations.filter((elicitation) => elicitation.conversationId === null || elicitation.conversationId !== open);
  const waiting = useMemo(
    () => new Set([...approvals, ...elicitations].map((question) => question.conversationId).filter((id): id is string => id !== null)),
    [approvals, elicitations],
  );
  const answerElicitation = (elicitationId: string, action: ElicitationAction, content?: Record<string, ElicitationFieldValue>) =>
    unwrap(api.elicitations.answer({ namespace: place.namespace, elicitationId, action, ...(content === undefined ? {} : { content }) }));
  // The bundle opens in a review window of its own (main shows the file dialog and the window).
  const openBundle = () => {
    unwrap(api.review.open({})).catch(fail);
  };
  return (
    <div className={`app${place.page === 'chats' ? ' with-sessions' : ''}`}>
      <nav className="rail" aria-label="Ward">
        <div className="rail-mark" aria-hidden>
          W
        </div>
        <ul>
          {PAGES.map((page) => (
            <li key={page.id}>
              <button type="button" className="rail-button" aria-current={place.page === page.id ? 'page' : undefined} onClick={() => go({ page: page.id })} title={page.label}>
                <page.icon size={20} aria-hidden />
                <span>{page.label}</span>
                {page.id === 'chats' && approvals.length > 0 && (
                  <span className="badge" aria-label={`${approvals.length} ${approvals.length === 1 ? 'approval' : 'approvals'} waiting`}>
                    {approvals.length}
                  </span>
                )}
              </button>
            </li>
          ))}
        </ul>
      </nav>
      {place.page === 'chats' && (
        <SessionList
          namespaces={namespaces}
          namespace={place.namespace}
          onNamespace={(namespace) => go({ namespace, conversationId: null })}
          namespaceLock={policySetting(policy, 'namespace')}
          conversations={conversations}
          current={place.conversationId}
          waiting={waiting}
          query={query}
          onQuery={setQuery}
          onOpen={(conversationId) => go({ page: 'chats', conversationId })}
          onNewChat={newChat}
          hits={hits}
          searchProblem={searchProblem}
          onOpenHit={(hit) => {
            setFocus({ conversationId: hit.conversationId, seq: hit.seq });
            go({ page: 'chats', conversationId: hit.conversationId });
          }}
          today={today}
          onOpenBundle={openBundle}
        />
      )}
      <main className="content">
        {error !== null && (
          <div className="banner banner-error" role="alert">
            {error}{' '}
            <button type="button" className="link-button" onClick={() => setError(null)}>
              Dismiss
            </button>
          </div>
        )}
        {elsewhere.length > 0 && (
          <ul className="elsewhere" aria-label="Approvals in other chats">
            {elsewhere.map((approval) => (
              <li key={approval.id} className="elsewhere-item" data-testid="approval-elsewhere">
                <span className="dot dot-waiting" aria-hidden />
                <span className="elsewhere-text">
                  Approval needed in “{titleOf(conversations, approval.conversationId)}”: agent {approval.agent} {approval.summary}
                </span>
                {approval.conversationId !== null && (
                  <button type="button" className="link-button" onClick={() => go({ page: 'chats', conversationId: approval.conversationId })}>
                    Open it
                  </button>
                )}
              </li>
            ))}
          </ul>
        )}
        {elicitationsElsewhere.map((elicitation) => (
          <ElicitationPrompt
            key={elicitation.id}
            elicitation={elicitation}
            onAnswer={(action, content) => answerElicitation(elicitation.id, action, content)}
            origin={elicitation.conversationId === null ? undefined : { title: titleOf(conversations, elicitation.conversationId), onOpen: () => go({ page: 'chats', conversationId: elicitation.conversationId }) }}
          />
        ))}
        {!ready && <div className="chat-loading">Loading…</div>}
        {ready &&
          place.page === 'chats' &&
          (place.conversationId === null ? (
            <div className="chat-empty">
              <div className="empty-state">
                <p>Choose a session, or start a new chat.</p>
                <button type="button" className="primary" onClick={newChat}>
                  New chat <kbd>Ctrl+N</kbd>
                </button>
              </div>
            </div>
          ) : place.conversationId === 'new' ? (
            <NewChat
              key={`${place.namespace}/new/${newChatKey}`}
              api={api}
              namespace={place.namespace}
              agents={agents}
              focusKey={String(newChatKey)}
              onCreated={(conversationId) => {
                refreshList();
                go({ conversationId });
              }}
            />
          ) : (
            <ChatView
              key={`${place.namespace}/${place.conversationId}`}
              api={api}
              router={router}
              namespace={place.namespace}
              conversationId={place.conversationId}
              approvals={approvals}
              agents={agents}
              elicitations={elicitations}
              onAnswerElicitation={answerElicitation}
              onOpenLink={openLink}
              onRunChange={refreshList}
              onTitle={setChatTitle}
              announce={announce}
              focusSeq={focus?.conversationId === place.conversationId ? focus.seq : null}
            />
          ))}
        {ready && place.page === 'agents' && <AgentsPage api={api} namespace={place.namespace} />}
        {ready && place.page === 'connections' && <ConnectionsPage api={api} namespace={place.namespace} policy={policy} />}
        {ready && place.page === 'settings' && <SettingsPage api={api} namespace={place.namespace} policy={policy} />}
        {place.page === 'policy' && <PolicyPage policy={policy} />}
      </main>
      <div className="sr-only" role="status" aria-live="polite" data-testid="announcer">
        {announcement}
      </div>
      <Switcher
        open={switcherOpen}
        conversations={conversations}
        waiting={waiting}
        onClose={() => setSwitcherOpen(false)}
        onOpen={(conversationId) => {
          setSwitcherOpen(false);
          go({ page: 'chats', conversationId });
        }}
        onPage={(page) => {
          setSwitcherOpen(false);
          go({ page });
        }}
        onNewChat={() => {
          setSwitcherOpen(false);
          newChat();
        }}
      />
    </div>
  );
}
