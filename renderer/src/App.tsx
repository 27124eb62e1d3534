/**
 * The window: a fixed navigation rail, the sessions of the namespace (newest activity first), and
 * the current page. Keyboard: Ctrl/Cmd+K switches sessions, Ctrl/Cmd+N starts a chat, F6 moves
 * between the panes, Escape stops a run (ChatView). One status region announces what finished
 * and which chat waits for an approval; approvals of other chats are a badge and a one-line notice.
 * The state lives in hooks (state/use-*.ts); this is their composition.
 */
import { useCallback, useState } from 'react';
import type { WardApi } from '../../preload/contract.js';
import { ChatsPage } from './components/ChatsPage.js';
import { Elsewhere } from './components/Elsewhere.js';
import { usePolicy, policySetting } from './components/ManagedLock.js';
import { DismissibleError } from './components/PageNotice.js';
import { Rail } from './components/Rail.js';
import { SessionList } from './components/SessionList.js';
import { useSetupCard } from './components/SetupCard.js';
import { Switcher } from './components/Switcher.js';
import { AgentsPage } from './pages/AgentsPage.js';
import { ConnectionsPage } from './pages/ConnectionsPage.js';
import { PolicyPage } from './pages/PolicyPage.js';
import { SettingsPage } from './pages/SettingsPage.js';
import { usePushRouter } from './state/follow.js';
import { useAnnouncer } from './state/use-announcer.js';
import { useApprovalAnnouncements, useApprovals } from './state/use-approvals.js';
import { useAgents, useConversationList } from './state/use-conversation-list.js';
import { useNamespaces } from './state/use-namespaces.js';
import { useNewChat, usePlace, useSessionsPane, useWindowTitle } from './state/use-place.js';
import { useSearch } from './state/use-search.js';
import { useWindowActions } from './state/use-window-actions.js';
import { useWindowError } from './state/use-window-error.js';
import { useWindowKeys } from './state/use-window-keys.js';

export function App({ api }: { api: WardApi }) {
  const router = usePushRouter(api);
  const { error, fail, dismiss } = useWindowError();
  const namespaces = useNamespaces(api, fail);
  const [place, go] = usePlace(namespaces);
  // Read again each time the Policy page opens: its audit line says what waits now.
  const policy = usePolicy(api, place.page === 'policy');
  // Nothing is asked of a namespace before main has said it is one this Ward offers.
  const scope = { ready: namespaces.some((ns) => ns.name === place.namespace), namespace: place.namespace };
  const sessions = useSessionsPane(go);
  const openChat = sessions.openChat;
  const search = useSearch(api, scope, openChat);
  const { conversations, today, refresh: refreshList } = useConversationList(api, scope, search.query, fail);
  const agents = useAgents(api, scope, place.page, fail);
  const questions = useApprovals(api, router, scope, fail);
  const [announcement, announce] = useAnnouncer();
  useApprovalAnnouncements(questions.approvals, conversations, announce);
  const setChatTitle = useWindowTitle(place);
  const [switcherOpen, setSwitcherOpen] = useState(false);
  const [newChatKey, newChat] = useNewChat(go);
  useWindowKeys(useCallback(() => setSwitcherOpen(true), []), newChat);
  const actions = useWindowActions(api, place.namespace, fail);
  const chats = place.page === 'chats';
  const setup = useSetupCard(api, scope, place, go, newChat);
  return (
    <div className={`app${chats ? ' with-sessions' : ''}${sessions.open ? ' sessions-open' : ''}`}>
      <Rail page={place.page} approvals={questions.approvals.length} onPage={(page) => go({ page })} sessions={chats ? { open: sessions.open, onToggle: sessions.toggle } : undefined} />
      {chats && (
        <SessionList
          namespaces={namespaces}
          namespace={place.namespace}
          onNamespace={(namespace) => go({ namespace, conversationId: null })}
          namespaceLock={policySetting(policy, 'namespace')}
          conversations={conversations}
          current={place.conversationId}
          waiting={questions.waiting}
          query={search.query}
          onQuery={search.setQuery}
          onOpen={openChat}
          onNewChat={newChat}
          hits={search.hits}
          searchProblem={search.problem}
          onOpenHit={search.openHit}
          today={today}
          onOpenBundle={actions.openBundle}
        />
      )}
      <main className="content">
        <DismissibleError text={error} onDismiss={dismiss} />
        <Elsewhere open={chats ? place.conversationId : null} questions={questions} conversations={conversations} onOpenChat={openChat} onAnswerElicitation={actions.answerElicitation} />
        {!scope.ready && <div className="chat-loading">Loading…</div>}
        {scope.ready && chats && (
          <ChatsPage
            api={api}
            router={router}
            namespace={place.namespace}
            conversationId={place.conversationId}
            newChatKey={newChatKey}
            agents={agents}
            questions={questions}
            actions={actions}
            onNewChat={newChat}
            onOpenChat={openChat}
            onListChange={refreshList}
            onTitle={setChatTitle}
            announce={announce}
            focus={search.focus}
            setup={setup}
          />
        )}
        {scope.ready && place.page === 'agents' && <AgentsPage api={api} namespace={place.namespace} />}
        {scope.ready && place.page === 'connections' && <ConnectionsPage api={api} namespace={place.namespace} policy={policy} />}
        {scope.ready && place.page === 'settings' && <SettingsPage api={api} namespace={place.namespace} policy={policy} />}
        {place.page === 'policy' && <PolicyPage policy={policy} />}
      </main>
      <div className="sr-only" role="status" aria-live="polite" data-testid="announcer">{announcement}</div>
      <Switcher open={switcherOpen} conversations={conversations} waiting={questions.waiting} onClose={() => setSwitcherOpen(false)} onOpen={openChat} onPage={(page) => go({ page })} onNewChat={newChat} />
    </div>
  );
}
