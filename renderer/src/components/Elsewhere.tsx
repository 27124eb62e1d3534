/** Questions of chats other than the open one: an approval is a one-line notice with "Open it", a request for input is answered here. */
import type { ConversationView } from '../../../common/views.js';
import type { Approvals } from '../state/use-approvals.js';
import { titleOf } from '../state/use-conversation-list.js';
import type { AnswerElicitation } from '../state/use-window-actions.js';
import { ElicitationPrompt } from './ElicitationPrompt.js';

export interface ElsewhereProps {
  /** The chat on screen, whose own questions are shown in it; null when none is. */
  readonly open: string | null;
  readonly questions: Pick<Approvals, 'approvals' | 'elicitations'>;
  readonly conversations: readonly ConversationView[];
  readonly onOpenChat: (conversationId: string) => void;
  readonly onAnswerElicitation: AnswerElicitation;
}

export function Elsewhere({ open, questions: { approvals, elicitations }, conversations, onOpenChat, onAnswerElicitation }: ElsewhereProps) {
  const approvalsElsewhere = approvals.filter((approval) => approval.conversationId === null || approval.conversationId !== open);
  const elicitationsElsewhere = elicitations.filter((elicitation) => elicitation.conversationId === null || elicitation.conversationId !== open);
  return (
    <>
      {approvalsElsewhere.length > 0 && (
        <ul className="elsewhere" aria-label="Approvals in other chats">
          {approvalsElsewhere.map((approval) => (
            <li key={approval.id} className="elsewhere-item" data-testid="approval-elsewhere">
              <span className="dot dot-waiting" aria-hidden />
              <span className="elsewhere-text">
                Approval needed in “{titleOf(conversations, approval.conversationId)}”: agent {approval.agent} {approval.summary}
              </span>
              {approval.conversationId !== null && (
                <button type="button" className="link-button" onClick={() => onOpenChat(approval.conversationId!)}>
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
          onAnswer={(action, content) => onAnswerElicitation(elicitation.id, action, content)}
          origin={elicitation.conversationId === null ? undefined : { title: titleOf(conversations, elicitation.conversationId), onOpen: () => onOpenChat(elicitation.conversationId!) }}
        />
      ))}
    </>
  );
}
