/** The Chats page's body: nothing chosen yet, a new chat being written, or one chat. */
import type { ReactNode } from 'react';
import type { WardApi } from '../../../preload/contract.js';
import type { AgentView } from '../../../common/views.js';
import type { PushRouter } from '../state/follow.js';
import type { Announce } from '../state/use-announcer.js';
import type { Approvals } from '../state/use-approvals.js';
import type { SearchFocus } from '../state/use-search.js';
import type { AnswerElicitation } from '../state/use-window-actions.js';
import { ChatView } from './ChatView.js';
import { NewChat } from './NewChat.js';

export interface ChatsPageProps {
  readonly api: WardApi;
  readonly router: PushRouter;
  readonly namespace: string;
  /** "new" is a chat not started yet; null is none chosen. */
  readonly conversationId: string | null;
  /** Changes each time New chat is asked for, so it starts blank. */
  readonly newChatKey: number;
  readonly agents: readonly AgentView[];
  readonly questions: Approvals;
  readonly actions: { readonly answerElicitation: AnswerElicitation; readonly openLink: (url: string) => void };
  readonly onNewChat: () => void;
  readonly onOpenChat: (conversationId: string) => void;
  /** Told when the namespace's list of sessions changed (a chat was created, a run started or ended). */
  readonly onListChange: () => void;
  readonly onTitle: (title: string) => void;
  readonly announce: Announce;
  readonly focus: SearchFocus | null;
  /** The first-run setup card, shown instead of "Choose a session" while the namespace has no model key, and the folder a new chat starts in (the card's first folder). */
  readonly setup: { readonly setupCard: ReactNode | null; readonly firstFolder: string | null };
}

export function ChatsPage(props: ChatsPageProps) {
  const { api, router, namespace, conversationId, newChatKey, agents, questions, actions, onNewChat, onOpenChat, onListChange, onTitle, announce, focus, setup } = props;
  if (conversationId === null && setup.setupCard !== null) return <div className="chat-empty setup">{setup.setupCard}</div>;
  if (conversationId === null) {
    return (
      <div className="chat-empty">
        <div className="empty-state">
          <h1 className="sr-only">Chats</h1>
          <p>Choose a session, or start a new chat.</p>
          <button type="button" className="primary" onClick={onNewChat}>
            New chat <kbd>Ctrl+N</kbd>
          </button>
        </div>
      </div>
    );
  }
  if (conversationId === 'new') {
    const created = (created: string) => {
      onListChange();
      onOpenChat(created);
    };
    return <NewChat key={`${namespace}/new/${newChatKey}`} api={api} namespace={namespace} agents={agents} focusKey={String(newChatKey)} onCreated={created} initialWorkspace={setup.firstFolder} />;
  }
  return (
    <ChatView
      key={`${namespace}/${conversationId}`}
      api={api}
      router={router}
      namespace={namespace}
      conversationId={conversationId}
      approvals={questions.approvals}
      agents={agents}
      elicitations={questions.elicitations}
      onAnswerElicitation={actions.answerElicitation}
      onOpenLink={actions.openLink}
      onRunChange={onListChange}
      onTitle={onTitle}
      announce={announce}
      focusSeq={focus?.conversationId === conversationId ? focus.seq : null}
    />
  );
}
