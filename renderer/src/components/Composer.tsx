/**
 * The prompt box and the Send/Stop control (R6): running → Stop; after Stop → "Stopping…"
 * (disabled) until the run confirms; then "Stopped", which is not an error. No new prompt is
 * accepted while a run holds the conversation, and the box says what to do instead.
 */
import { ArrowUp, Square } from 'lucide-react';
import { useEffect, useRef, useState, type KeyboardEvent } from 'react';
import { MAX_PROMPT_CHARS } from '../../../common/limits.js';
import type { RunStatus } from '../state/timeline.js';

export interface ComposerProps {
  readonly run: RunStatus | null;
  readonly onSend: (prompt: string) => Promise<boolean>;
  readonly onStop: () => void;
  /** Focuses the box whenever it changes (a new chat, a chat opened). */
  readonly focusKey?: string;
  /** Shown instead of the usual hint (a draft chat says what it will do). */
  readonly hint?: string;
  /** The person started writing (the box was empty): the chat's CLI can start now. */
  readonly onWriting?: () => void;
}

export function runLabel(run: RunStatus | null): string {
  switch (run?.state) {
    case 'admitted':
    case 'running':
      return 'Responding…';
    case 'stopping':
      return 'Stopping…';
    case 'stopped':
      return 'Stopped';
    case 'failed':
      return 'Failed';
    case 'uncertain':
      return 'Outcome unknown';
    default:
      return '';
  }
}

/** What the box says while it takes no prompt, or the usual hint. */
export function composerPlaceholder(run: RunStatus | null, hint = 'Message the agent — Enter sends, Shift+Enter adds a line'): string {
  switch (run?.state) {
    case 'admitted':
    case 'running':
      return 'The agent is working — press Esc or Stop to interrupt it';
    case 'stopping':
      return 'Stopping — waiting for the tools that are running to finish';
    case 'uncertain':
      return 'Record what the unfinished run did (above) to send a new message';
    default:
      return hint;
  }
}

const MAX_ROWS = 12;

export function Composer({ run, onSend, onStop, focusKey, hint, onWriting }: ComposerProps) {
  const [text, setText] = useState('');
  const [sending, setSending] = useState(false);
  const box = useRef<HTMLTextAreaElement>(null);
  const state = run?.state;
  const running = state === 'admitted' || state === 'running';
  const stopping = state === 'stopping';
  const blocked = running || stopping || state === 'uncertain' || sending;

  useEffect(() => {
    if (focusKey !== undefined) box.current?.focus();
  }, [focusKey]);

  const send = async () => {
    const prompt = text.trim();
    if (prompt === '' || blocked) return;
    setSending(true);
    try {
      if (await onSend(prompt)) setText('');
    } finally {
      setSending(false);
    }
  };
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      void send();
    }
  };
  const rows = Math.min(MAX_ROWS, Math.max(2, text.split('\n').length));

  return (
    <div className="composer">
      <div className="composer-box">
        <textarea
          ref={box}
          aria-label="Message"
          placeholder={composerPlaceholder(run, hint)}
          value={text}
          maxLength={MAX_PROMPT_CHARS}
          onChange={(event) => {
            if (text === '' && event.target.value !== '') onWriting?.();
            setText(event.target.value);
          }}
          onKeyDown={onKeyDown}
          rows={rows}
        />
        <div className="composer-actions">
          <span className={`run-state run-${state ?? 'idle'}`} data-testid="run-state">
            {runLabel(run)}
          </span>
          {running || stopping ? (
            <button type="button" className="stop" onClick={onStop} disabled={stopping}>
              <Square size={12} aria-hidden />
              {stopping ? 'Stopping…' : 'Stop'}
            </button>
          ) : (
            <button type="button" className="primary" onClick={() => void send()} disabled={blocked || text.trim() === ''}>
              <ArrowUp size={14} aria-hidden />
              Send
            </button>
          )}
        </div>
      </div>
    </div>
  );
}
