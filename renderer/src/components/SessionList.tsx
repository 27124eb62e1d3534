/**
 * The sessions of a namespace, newest activity first, each with its date, a one-line preview and
 * whether it waits for an approval; arrow keys move between them. Above: the namespace switcher,
 * "New chat" and the search; with a query, the messages it matches (E4); below, today's usage
 * and "Open bundle…" for reviewing an exported session.
 */
import { Clock, FolderOpen, Plus, Search } from 'lucide-react';
import type { KeyboardEvent } from 'react';
import type { ConversationView, NamespaceView, PolicySettingView, SearchHitView, UsageSummaryView } from '../../../common/views.js';
import { describeTotal } from '../../../common/usage.js';
import { ManagedLock } from './ManagedLock.js';
import { escapeLineForWindow } from '../../../common/display.js';
import { formatTime } from './Timeline.js';
import { plainPreview } from '../state/plain-preview.js';

export interface SessionListProps {
  readonly namespaces: readonly NamespaceView[];
  readonly namespace: string;
  readonly onNamespace: (namespace: string) => void;
  /** Set when the admin policy fixes the namespace: the switcher is locked and says so. */
  readonly namespaceLock?: PolicySettingView | undefined;
  readonly conversations: readonly ConversationView[];
  readonly current: string | null;
  /** Conversations with an approval waiting. */
  readonly waiting: ReadonlySet<string>;
  readonly query: string;
  readonly onQuery: (query: string) => void;
  readonly onOpen: (conversationId: string) => void;
  readonly onNewChat: () => void;
  /** Messages the query matches, and why there are none when the search failed. */
  readonly hits: readonly SearchHitView[];
  readonly searchProblem: string | null;
  readonly onOpenHit: (hit: SearchHitView) => void;
  /** The namespace's usage today (UTC), once known. */
  readonly today: UsageSummaryView['total'] | null;
  readonly onOpenBundle: () => void;
}

/** ArrowUp/ArrowDown/Home/End move focus between the buttons of a list. */
export function moveInList(event: KeyboardEvent<HTMLElement>): void {
  const keys = ['ArrowDown', 'ArrowUp', 'Home', 'End'];
  if (!keys.includes(event.key)) return;
  const buttons = [...event.currentTarget.querySelectorAll<HTMLButtonElement>('button[data-list-item]')];
  const now = buttons.indexOf(document.activeElement as HTMLButtonElement);
  if (buttons.length === 0) return;
  event.preventDefault();
  const next = event.key === 'Home' ? 0 : event.key === 'End' ? buttons.length - 1 : Math.min(buttons.length - 1, Math.max(0, now + (event.key === 'ArrowDown' ? 1 : -1)));
  buttons[next]!.focus();
}

/** Hits in the order main ranked them, gathered under their conversation (its best hit decides its place). */
function hitsByConversation(hits: readonly SearchHitView[]): { readonly conversationId: string; readonly title: string; readonly hits: SearchHitView[] }[] {
  const groups = new Map<string, { readonly conversationId: string; readonly title: string; readonly hits: SearchHitView[] }>();
  for (const hit of hits) {
    const group = groups.get(hit.conversationId) ?? { conversationId: hit.conversationId, title: hit.title, hits: [] };
    group.hits.push(hit);
    groups.set(hit.conversationId, group);
  }
  return [...groups.values()];
}

export function SessionList({ namespaces, namespace, onNamespace, namespaceLock, conversations, current, waiting, query, onQuery, onOpen, onNewChat, hits, searchProblem, onOpenHit, today, onOpenBundle }: SessionListProps) {
  return (
    <aside className="sidebar" id="sessions-pane" aria-label="Sessions pane">
      <label className="namespace-switcher">
        <span>Namespace</span>
        <select value={namespace} disabled={namespaceLock !== undefined} onChange={(event) => onNamespace(event.target.value)}>
          {namespaces.map((ns) => (
            <option key={ns.name} value={ns.name}>
              {ns.name}
            </option>
          ))}
          {!namespaces.some((ns) => ns.name === namespace) && <option value={namespace}>{namespace}</option>}
        </select>
      </label>
      <ManagedLock setting={namespaceLock} />
      <button type="button" className="primary new-chat-button" onClick={onNewChat} title="New chat (Ctrl+N)">
        <Plus size={16} aria-hidden /> New chat
      </button>
      <div className="search-field">
        <Search size={14} aria-hidden />
        <input type="search" aria-label="Search sessions" placeholder="Search sessions" value={query} onChange={(event) => onQuery(event.target.value)} />
      </div>
      {query.trim() !== '' && (
        <div className="sidebar-heading" aria-hidden>
          Titles
        </div>
      )}
      <ul className="sessions" aria-label="Sessions" onKeyDown={moveInList}>
        {conversations.map((conversation) => {
          const asks = waiting.has(conversation.id);
          return (
            <li key={conversation.id}>
              <button type="button" data-list-item aria-current={conversation.id === current ? 'true' : undefined} onClick={() => onOpen(conversation.id)}>
                <span className="session-top">
                  <span className="session-title">{escapeLineForWindow(conversation.title, 200)}</span>
                  <time className="session-date" dateTime={conversation.lastActivityAt}>
                    {formatTime(conversation.lastActivityAt)}
                  </time>
                </span>
                <span className="session-preview">{conversation.preview === '' ? 'No messages yet' : escapeLineForWindow(plainPreview(conversation.preview), 160)}</span>
                <span className="session-meta">
                  {conversation.agentName}
                  {conversation.activeRun !== null && ` · ${conversation.activeRun.state}`}
                  {asks && ' · '}
                  {asks && (
                    <span className="session-waiting">
                      <Clock size={12} aria-hidden /> waiting for you
                    </span>
                  )}
                </span>
              </button>
            </li>
          );
        })}
        {conversations.length === 0 && <li className="muted session-none">{query ? 'No matching sessions' : 'No sessions yet'}</li>}
      </ul>
      {query.trim() !== '' && <MessageHits hits={hits} searchProblem={searchProblem} onOpenHit={onOpenHit} />}
      <div className="sidebar-foot">
        {today !== null && today.turns > 0 && (
          <div className="usage-today muted" data-testid="usage-today">
            Today: {describeTotal(today)}
          </div>
        )}
        <button type="button" className="link-button" onClick={onOpenBundle}>
          <FolderOpen size={14} aria-hidden /> Open bundle…
        </button>
      </div>
    </aside>
  );
}

/** With a query, the messages it matches, one group per conversation, a snippet per hit (E4). */
function MessageHits({ hits, searchProblem, onOpenHit }: Pick<SessionListProps, 'hits' | 'searchProblem' | 'onOpenHit'>) {
  return (
    <>
      <div className="sidebar-heading" aria-hidden>
        In messages
      </div>
      <ul className="sessions search-hits" aria-label="Found in messages" onKeyDown={moveInList}>
        {hitsByConversation(hits).map((group) => (
          <li key={group.conversationId} className="hit-group">
            <span className="session-title hit-group-title">{escapeLineForWindow(group.title, 200)}</span>
            <ul className="hit-list">
              {group.hits.map((hit) => (
                <li key={hit.seq}>
                  <button type="button" data-list-item onClick={() => onOpenHit(hit)}>
                    <span className="hit-snippet">
                      {hit.snippet.map((part, index) => (part.match ? <mark key={index}>{part.text}</mark> : <span key={index}>{part.text}</span>))}
                    </span>
                  </button>
                </li>
              ))}
            </ul>
          </li>
        ))}
        {hits.length === 0 && <li className="muted session-none">{searchProblem ?? 'No matches in messages'}</li>}
      </ul>
    </>
  );
}
