/**
 * The prompt box and the Send/Stop control (R6): running → Stop; after Stop → "Stopping…"
 * (disabled) until the run confirms; then "Stopped", which is not an error. No new prompt is
 * accepted while a run holds the conversation.
 */
import { useState, type KeyboardEvent } from 'react';
import type { RunStatus } from '../state/timeline.js';

export interface ComposerProps {
  readonly run: RunStatus | null;
  readonly onSend: (prompt: string) => Promise<boolean>;
  readonly onStop: () => void;
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

export function Composer({ run, onSend, onStop }: ComposerProps) {
  const [text, setText] = useState('');
  const [sending, setSending] = useState(false);
  const state = run?.state;
  const running = state === 'admitted' || state === 'running';
  const stopping = state === 'stopping';
  const blocked = running || stopping || state === 'uncertain' || sending;

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
    if (event.key === 'Enter' && !event.shiftKey) {
      event.preventDefault();
      void send();
    } else if (event.key === 'Escape' && running) {
      onStop();
    }
  };

  return (
    <div className="composer">
      <textarea
        aria-label="Message"
        placeholder={blocked ? 'Wait for the current response to finish' : 'Message the agent (Enter sends, Shift+Enter for a new line)'}
        value={text}
        onChange={(event) => setText(event.target.value)}
        onKeyDown={onKeyDown}
        rows={3}
      />
      <div className="composer-actions">
        <span className={`run-state run-${state ?? 'idle'}`} role="status" data-testid="run-state">
          {runLabel(run)}
        </span>
        {running || stopping ? (
          <button type="button" className="stop" onClick={onStop} disabled={stopping}>
            {stopping ? 'Stopping…' : 'Stop'}
          </button>
        ) : (
          <button type="button" className="primary" onClick={() => void send()} disabled={blocked || text.trim() === ''}>
            Send
          </button>
        )}
      </div>
    </div>
  );
}
