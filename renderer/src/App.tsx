/** The window: namespace switcher, navigation, searchable sessions, and the current page. */
import { useCallback, useEffect, useMemo, useState } from 'react';
import type { AgentView, ApprovalAnswer, ConversationView, NamespaceView, PendingApprovalView, SearchHitView, UsageSummaryView, WardApi } from '../../preload/contract.js';
import { describeUsage } from '../../preload/usage.js';
import { errorText, unwrap } from './api.js';
import { ApprovalPrompt } from './components/ApprovalPrompt.js';
import { ChatView } from './components/ChatView.js';
import { AgentsPage } from './pages/AgentsPage.js';
import { ConnectionsPage } from './pages/ConnectionsPage.js';
import { SettingsPage } from './pages/SettingsPage.js';
import { PushRouter } from './state/follow.js';

type Page = 'chats' | 'agents' | 'connections' | 'settings';
const PAGES: readonly { id: Page; label: string }[] = [
  { id: 'chats', label: 'Chats' },
  { id: 'agents', label: 'Agents' },
  { id: 'connections', label: 'Connections' },
  { id: 'settings', label: 'Settings' },
];

interface Place {
  readonly namespace: string;
  readonly page: Page;
  readonly conversationId: string | null;
}

const PLACE_KEY = 'ward.place';
/** Published by main on first use (a fresh install has no agent of its own yet). */
const BUILT_IN_AGENT = 'default';

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

export function App({ api }: { api: WardApi }) {
  const router = useMemo(() => new PushRouter(api), [api]);
  useEffect(() => () => router.close(), [router]);
  const [place, setPlace] = useState<Place>(loadPlace);
  const [namespaces, setNamespaces] = useState<NamespaceView[]>([]);
  const [conversations, setConversations] = useState<ConversationView[]>([]);
  const [agents, setAgents] = useState<AgentView[]>([]);
  const [query, setQuery] = useState('');
  const [approvals, setApprovals] = useState<readonly PendingApprovalView[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [newTitle, setNewTitle] = useState('');
  const [newAgent, setNewAgent] = useState('');
  const [listTick, setListTick] = useState(0);
  const [hits, setHits] = useState<readonly SearchHitView[]>([]);
  const [searchProblem, setSearchProblem] = useState<string | null>(null);
  /** A search hit the chat brings into view. */
  const [focus, setFocus] = useState<{ conversationId: string; seq: number } | null>(null);
  const [today, setToday] = useState<UsageSummaryView['total'] | null>(null);

  const go = useCallback((next: Partial<Place>) => setPlace((current) => ({ ...current, ...next })), []);
  useEffect(() => sessionStorage.setItem(PLACE_KEY, JSON.stringify(place)), [place]);
  const fail = (failure: unknown) => setError(errorText(failure));

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
        .then(setConversations)
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
      .then((list) => {
        setAgents(list);
        setNewAgent((current) => current || list[0]?.name || BUILT_IN_AGENT);
      })
      .catch(fail);
  }, [api, ready, place.namespace, place.page]);

  useEffect(() => {
    if (!ready) return;
    let cancelled = false;
    let unroute: (() => void) | null = null;
    setApprovals([]);
    unwrap(api.approvals.watch({ namespace: place.namespace }))
      .then(({ subscriptionId }) => {
        if (cancelled) return router.forget(subscriptionId);
        unroute = router.route(subscriptionId, (pushed) => {
          if (pushed.kind === 'approvals') setApprovals(pushed.pending);
        });
      })
      .catch(fail);
    return () => {
      cancelled = true;
      unroute?.();
    };
  }, [api, router, ready, place.namespace]);

  const refreshList = useCallback(() => setListTick((tick) => tick + 1), []);

  const openLink = useCallback(
    (url: string) => {
      unwrap(api.links.openExternal({ url })).catch(fail);
    },
    [api],
  );

  // Questions from other conversations (or from a run main could not place) are shown window-wide.
  const answer = (approvalId: string, value: ApprovalAnswer) => {
    unwrap(api.approvals.answer({ namespace: place.namespace, approvalId, answer: value })).catch(fail);
  };

  const createConversation = async () => {
    try {
      const created = await unwrap(api.conversations.create({ namespace: place.namespace, agentName: newAgent, title: newTitle.trim() || 'New chat' }));
      setNewTitle('');
      setListTick((tick) => tick + 1);
      go({ page: 'chats', conversationId: created.id });
    } catch (failure) {
      fail(failure);
    }
  };

  // The bundle opens in a review window of its own (main shows the file dialog and the window).
  const openBundle = () => {
    unwrap(api.review.open({})).catch(fail);
  };

  const pendingCount = approvals.length;
  return (
    <div className="app">
      <nav className="sidebar" aria-label="Ward">
        <label className="namespace-switcher">
          Namespace
          <select value={place.namespace} onChange={(event) => go({ namespace: event.target.value, conversationId: null })}>
            {namespaces.map((ns) => (
              <option key={ns.name} value={ns.name}>
                {ns.name}
              </option>
            ))}
            {!namespaces.some((ns) => ns.name === place.namespace) && <option value={place.namespace}>{place.namespace}</option>}
          </select>
        </label>
        <ul className="nav">
          {PAGES.map((page) => (
            <li key={page.id}>
              <button type="button" aria-current={place.page === page.id ? 'page' : undefined} onClick={() => go({ page: page.id })}>
                {page.label}
                {page.id === 'chats' && pendingCount > 0 && <span className="badge" aria-label={`${pendingCount} approvals waiting`}>{pendingCount}</span>}
              </button>
            </li>
          ))}
        </ul>
        <input type="search" className="search" aria-label="Search sessions" placeholder="Search sessions" value={query} onChange={(event) => setQuery(event.target.value)} />
        <ul className="sessions" aria-label="Sessions">
          {conversations.map((conversation) => (
            <li key={conversation.id}>
              <button
                type="button"
                aria-current={conversation.id === place.conversationId ? 'true' : undefined}
                onClick={() => go({ page: 'chats', conversationId: conversation.id })}
              >
                <span className="session-title">{conversation.title}</span>
                <span className="session-meta">
                  {conversation.agentName}
                  {conversation.activeRun !== null && ` · ${conversation.activeRun.state}`}
                </span>
              </button>
            </li>
          ))}
          {conversations.length === 0 && <li className="muted">{query ? 'No matching sessions' : 'No sessions yet'}</li>}
        </ul>
        {query.trim() !== '' && (
          <ul className="sessions search-hits" aria-label="Found in messages">
            {hits.map((hit) => (
              <li key={`${hit.conversationId}/${hit.seq}`}>
                <button
                  type="button"
                  onClick={() => {
                    setFocus({ conversationId: hit.conversationId, seq: hit.seq });
                    go({ page: 'chats', conversationId: hit.conversationId });
                  }}
                >
                  <span className="session-title">{hit.title}</span>
                  <span className="hit-snippet">
                    {hit.snippet.map((part, index) => (part.match ? <mark key={index}>{part.text}</mark> : <span key={index}>{part.text}</span>))}
                  </span>
                </button>
              </li>
            ))}
            {hits.length === 0 && <li className="muted">{searchProblem ?? 'No matches in messages'}</li>}
          </ul>
        )}
        {today !== null && today.turns > 0 && (
          <div className="usage-today muted" data-testid="usage-today">
            Today: {describeUsage(today.tokens, today.costUsd)}
          </div>
        )}
        <button type="button" className="link-button" onClick={openBundle}>
          Open bundle…
        </button>
        <form
          className="new-chat"
          onSubmit={(event) => {
            event.preventDefault();
            void createConversation();
          }}
        >
          <select aria-label="Agent for a new chat" value={newAgent} onChange={(event) => setNewAgent(event.target.value)}>
            {agents.map((agent) => (
              <option key={agent.name} value={agent.name}>
                {agent.name}
              </option>
            ))}
            {!agents.some((agent) => agent.name === BUILT_IN_AGENT) && <option value={BUILT_IN_AGENT}>{BUILT_IN_AGENT} (built in)</option>}
          </select>
          <input aria-label="Title of a new chat" placeholder="Title" value={newTitle} maxLength={200} onChange={(event) => setNewTitle(event.target.value)} />
          <button type="submit" disabled={newAgent === ''}>
            New chat
          </button>
        </form>
      </nav>
      <main className="content">
        {error !== null && (
          <div className="banner banner-error" role="alert">
            {error}{' '}
            <button type="button" className="link-button" onClick={() => setError(null)}>
              Dismiss
            </button>
          </div>
        )}
        {approvals
          .filter((approval) => place.page !== 'chats' || approval.conversationId === null || approval.conversationId !== place.conversationId)
          .map((approval) => {
            const from = approval.conversationId;
            const origin = from === null ? undefined : { title: conversations.find((conversation) => conversation.id === from)?.title ?? 'another chat', onOpen: () => go({ page: 'chats', conversationId: from }) };
            return <ApprovalPrompt key={approval.id} approval={approval} onAnswer={(value) => answer(approval.id, value)} origin={origin} />;
          })}
        {!ready && <div className="chat-loading">Loading…</div>}
        {ready &&
          place.page === 'chats' &&
          (place.conversationId === null ? (
            <div className="chat-empty">Choose a session or start a new chat.</div>
          ) : (
            <ChatView
              key={`${place.namespace}/${place.conversationId}`}
              api={api}
              router={router}
              namespace={place.namespace}
              conversationId={place.conversationId}
              approvals={approvals}
              onOpenLink={openLink}
              onRunChange={refreshList}
              focusSeq={focus?.conversationId === place.conversationId ? focus.seq : null}
            />
          ))}
        {ready && place.page === 'agents' && <AgentsPage api={api} namespace={place.namespace} />}
        {ready && place.page === 'connections' && <ConnectionsPage api={api} namespace={place.namespace} />}
        {ready && place.page === 'settings' && <SettingsPage api={api} namespace={place.namespace} />}
      </main>
    </div>
  );
}
