import { describe, expect, it } from 'vitest';
import { formatLive, newStreamedText } from '../../main/cli/format-event.js';
import type { JournalEvent } from '../../main/store/journal.js';
import { hostileEvents, UNSAFE_FOR_TERMINAL } from '../support/hostile.js';

let seq = 0;
const event = (type: string, payload: unknown): JournalEvent => ({ seq: ++seq, runId: 'r', type, payload, createdAt: '2026-03-01T12:00:00.000Z' }) as unknown as JournalEvent;

function printed(events: JournalEvent[]): string {
  const streamed = newStreamedText();
  return events.map((one) => formatLive(one, streamed)?.text ?? '').join('');
}

describe('ward run live output', () => {
  it('test_prints_deltas_as_they_come_and_then_only_the_rest_of_the_final_text_not_the_text_twice', () => {
    expect(printed([event('assistant_delta', { text: 'Hel', messageIndex: 0 }), event('assistant_delta', { text: 'lo ', messageIndex: 0 }), event('assistant_text', { text: 'Hello world' }), event('assistant_text', { text: 'Second block' })])).toBe(
      'Hello world\nSecond block\n',
    );
  });

  it('test_prints_a_final_text_that_differs_from_what_streamed_whole_on_its_own_line', () => {
    expect(printed([event('assistant_delta', { text: 'draft', messageIndex: 0 }), event('assistant_text', { text: 'final' })])).toBe('draft\nfinal\n');
  });

  it('test_ends_a_line_a_stop_cut_short_and_escapes_control_and_bidi_characters_in_deltas', () => {
    expect(printed([event('assistant_delta', { text: 'evil\u202e\u001b[2J', messageIndex: 0 }), event('run_finished', { state: 'stopped', reason: 'stopped by the user' })])).toBe('evil\\u{202e}\\u{1b}[2J\n');
  });

  it('test_names_an_event_that_does_not_parse_on_stderr_instead_of_guessing_at_it', () => {
    expect(formatLive(event('tool_result', { toolUseId: 't1', tool: 'echo', ok: true }), newStreamedText())).toEqual({ stream: 'stderr', text: 'ward: tool_result: unreadable event: payload: Invalid input\n' });
  });

  it('test_no_event_of_any_type_prints_tag_characters_or_anything_else_invisible', () => {
    const streamed = newStreamedText();
    const shown = hostileEvents().map((hostile) => formatLive(event(hostile.type, hostile.payload), streamed)?.text ?? '');
    expect(shown.join('')).toContain('\\u{e0069}\\u{e0067}\\u{e006e}');
    for (const text of shown) expect(text).not.toMatch(UNSAFE_FOR_TERMINAL);
  });
});
