/**
 * Ctrl/Cmd+K: jump to any session or page by typing. A combobox of our own (the ARIA pattern:
 * the input keeps the focus, ↑/↓ move the active option named by aria-activedescendant, Enter
 * chooses it), in a modal dialog. It replaced cmdk, whose aria-activedescendant named an id
 * that was not in the page (axe: aria-valid-attr-value).
 */
import { useEffect, useId, useMemo, useState, type KeyboardEvent, type ReactNode } from 'react';
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

interface Choice {
  readonly key: string;
  readonly group: 'Sessions' | 'Go to';
  /** What typing matches against (lower case). */
  readonly words: string;
  readonly content: ReactNode;
  readonly choose: () => void;
}

/** Every word typed appears somewhere in the choice's words (case-insensitive). */
function matches(words: string, query: string): boolean {
  return query
    .toLowerCase()
    .split(/\s+/)
    .every((word) => words.includes(word));
}

function useChoices({ conversations, waiting, onClose, onOpen, onPage, onNewChat }: SwitcherProps): Choice[] {
  return useMemo(() => {
    // Choosing a session or a page closes the switcher first.
    const choose = (then: () => void) => () => {
      onClose();
      then();
    };
    const sessions = conversations.map((conversation): Choice => {
      const title = escapeLineForWindow(conversation.title, 120);
      return {
        key: `s-${conversation.id}`,
        group: 'Sessions',
        words: `${title} ${conversation.agentName} ${conversation.id}`.toLowerCase(),
        choose: choose(() => onOpen(conversation.id)),
        content: (
          <>
            <MessagesSquare size={14} aria-hidden />
            <span className="switcher-title">{title}</span>
            <span className="muted">{conversation.agentName}</span>
            {waiting.has(conversation.id) && <span className="session-waiting">waiting for you</span>}
          </>
        ),
      };
    });
    const newChat: Choice = { key: 'new', group: 'Go to', words: 'new chat', choose: choose(onNewChat), content: <><Plus size={14} aria-hidden /><span>New chat</span></> };
    const pages = PAGES.map((item): Choice => ({
      key: `p-${item.id}`,
      group: 'Go to',
      words: `page ${item.label}`.toLowerCase(),
      choose: choose(() => onPage(item.id)),
      content: <><item.icon size={14} aria-hidden /><span>{item.label}</span></>,
    }));
    return [...sessions, newChat, ...pages];
  }, [conversations, waiting, onClose, onOpen, onPage, onNewChat]);
}

function SwitcherBody(props: SwitcherProps) {
  const choices = useChoices(props);
  const [query, setQuery] = useState('');
  const [active, setActive] = useState(0);
  const id = useId();
  const shown = useMemo(() => choices.filter((choice) => matches(choice.words, query)), [choices, query]);
  const current = shown.length === 0 ? null : Math.min(active, shown.length - 1);
  const optionId = (index: number) => `${id}-option-${index}`;
  useEffect(() => {
    if (current !== null) document.getElementById(optionId(current))?.scrollIntoView({ block: 'nearest' });
  });

  const onKeyDown = (event: KeyboardEvent) => {
    if (current === null) return;
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      setActive((current + (event.key === 'ArrowDown' ? 1 : -1) + shown.length) % shown.length);
    } else if (event.key === 'Enter') {
      event.preventDefault();
      shown[current]!.choose();
    }
  };
  const groups = (['Sessions', 'Go to'] as const).map((group) => ({ group, members: shown.map((choice, index) => ({ choice, index })).filter(({ choice }) => choice.group === group) }));
  return (
    <>
      <input
        data-autofocus
        role="combobox"
        aria-label="Go to a session or page"
        aria-autocomplete="list"
        aria-expanded={current !== null}
        aria-controls={current === null ? undefined : `${id}-list`}
        aria-activedescendant={current === null ? undefined : optionId(current)}
        className="switcher-input"
        placeholder="Type a session title, an agent or a page…"
        value={query}
        onChange={(event) => {
          setQuery(event.target.value);
          setActive(0);
        }}
        onKeyDown={onKeyDown}
      />
      {current === null ? (
        <p className="switcher-empty" role="status">
          Nothing matches.
        </p>
      ) : (
        <div id={`${id}-list`} role="listbox" aria-label="Sessions and pages" className="switcher-list">
          {groups.map(({ group, members }) =>
            members.length === 0 ? null : (
              <div key={group} role="group" aria-labelledby={`${id}-${group}`}>
                <div id={`${id}-${group}`} className="switcher-heading" role="presentation">
                  {group}
                </div>
                {members.map(({ choice, index }) => (
                  <div key={choice.key} id={optionId(index)} role="option" aria-selected={index === current} className="switcher-item" onMouseMove={() => setActive(index)} onClick={choice.choose}>
                    {choice.content}
                  </div>
                ))}
              </div>
            ),
          )}
        </div>
      )}
    </>
  );
}

export function Switcher(props: SwitcherProps) {
  return (
    <Modal open={props.open} title="Go to" className="switcher" onClose={props.onClose}>
      {/* Mounted afresh on each opening: the query starts empty. */}
      {props.open && <SwitcherBody {...props} />}
    </Modal>
  );
}
