/** Ctrl/Cmd+K: jump to any session or page by typing (cmdk's list, in a modal dialog). */
import { Command } from 'cmdk';
import { MessagesSquare, Plus } from 'lucide-react';
import type { ConversationView } from '../../../common/views.js';
import { escapeLineForWindow } from '../../../common/display.js';
import { PAGES, type Page } from '../pages.js';
import { Modal } from './Dialog.js';

export interface SwitcherProps {
  readonly open: boolean;
  readonly conversations: readonly ConversationView[];
  readonly waiting: ReadonlySet<string>;
  readonly onClose: () => void;
  readonly onOpen: (conversationId: string) => void;
  readonly onPage: (page: Page) => void;
  readonly onNewChat: () => void;
}

export function Switcher({ open, conversations, waiting, onClose, onOpen, onPage, onNewChat }: SwitcherProps) {
  // Choosing a session or a page closes the switcher first.
  const choose = (then: () => void) => () => {
    onClose();
    then();
  };
  return (
    <Modal open={open} title="Go to" className="switcher" onClose={onClose}>
      <Command label="Go to a session or page" loop>
        <Command.Input data-autofocus placeholder="Type a session title, an agent or a page…" />
        <Command.List>
          <Command.Empty>Nothing matches.</Command.Empty>
          <Command.Group heading="Sessions">
            {conversations.map((conversation) => {
              const title = escapeLineForWindow(conversation.title, 120);
              return (
                <Command.Item key={conversation.id} value={`${title} ${conversation.agentName} ${conversation.id}`} onSelect={choose(() => onOpen(conversation.id))}>
                  <MessagesSquare size={14} aria-hidden />
                  <span className="switcher-title">{title}</span>
                  <span className="muted">{conversation.agentName}</span>
                  {waiting.has(conversation.id) && <span className="session-waiting">waiting for you</span>}
                </Command.Item>
              );
            })}
          </Command.Group>
          <Command.Group heading="Go to">
            <Command.Item value="New chat" onSelect={choose(onNewChat)}>
              <Plus size={14} aria-hidden /> New chat
            </Command.Item>
            {PAGES.map((item) => (
              <Command.Item key={item.id} value={`Page ${item.label}`} onSelect={choose(() => onPage(item.id))}>
                <item.icon size={14} aria-hidden /> {item.label}
              </Command.Item>
            ))}
          </Command.Group>
        </Command.List>
      </Command>
    </Modal>
  );
}
