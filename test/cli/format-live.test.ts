import { describe, expect, it } from 'vitest';
import { formatLive, newStreamedText } from '../../main/cli/format-event.js';
import type { JournalEvent } from '../../main/store/journal.js';

let seq = 0;
const event = (type: string, payload: unknown): JournalEvent => ({ seq: ++seq, runId: 'r', type, payload, createdAt: '2026-03-01T12:00:00.000Z' }) as unknown as JournalEvent;

function printed(events: JournalEvent[]): string {
  const streamed = newStreamedText();
  return events.map((one) => formatLive(one, streamed)?.text ?? '').join('');
}

describe('ward run live output', () => {
  it('prints deltas as they come and then only the rest of the final text, not the text twice', () => {
    expect(printed([event('assistant_delta', { text: 'Hel', messageIndex: 0 }), event('assistant_delta', { text: 'lo ', messageIndex: 0 }), event('assistant_text', { text: 'Hello world' }), event('assistant_text', { text: 'Second block' })])).toBe(
      'Hello world\nSecond block\n',
    );
  });

  it('prints a final text that differs from what streamed whole, on its own line', () => {
    expect(printed([event('assistant_delta', { text: 'draft', messageIndex: 0 }), event('assistant_text', { text: 'final' })])).toBe('draft\nfinal\n');
  });

  it('ends a line a stop cut short, and escapes control and bidi characters in deltas', () => {
    expect(printed([event('assistant_delta', { text: 'evil\u202e\u001b[2J', messageIndex: 0 }), event('run_finished', { state: 'stopped', reason: 'stopped by the user' })])).toBe('evil\\u{202e}\\u{1b}[2J\n');
  });

  it('names an event that does not parse on stderr instead of guessing at it', () => {
    expect(formatLive(event('tool_result', { toolUseId: 't1', tool: 'echo', ok: true }), newStreamedText())).toEqual({ stream: 'stderr', text: 'ward: tool_result: unreadable event: payload: Invalid input\n' });
  });
});
