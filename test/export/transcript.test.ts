/** D1: the Markdown and HTML transcripts show everything invisible as a mark, whatever field it is in. */
import { describe, expect, it } from 'vitest';
import { readJournalEvent } from '../../common/events.js';
import { renderHtml, renderMarkdown, type TranscriptEvent, type TranscriptMeta } from '../../main/export/transcript.js';
import { firstUnsafe, HOSTILE_SHORT, HOSTILE_TEXT, hostileEvents } from '../support/hostile.js';

const META: TranscriptMeta = { title: 'chat', conversationId: '00000000-0000-4000-8000-000000000001', agent: 'helper v1', exportedAt: '2026-03-01T12:00:00.000Z', events: 1, chainHead: 'a'.repeat(64), uncertainRuns: [] };

function transcriptEvents(events: ReadonlyArray<{ type: string; payload: unknown }>, createdAt = '2026-03-01T12:00:00.000Z'): TranscriptEvent[] {
  return events.map((event, index) => ({ seq: index + 1, runId: 'run-1', createdAt, event: readJournalEvent(event.type, event.payload) }));
}

const both = (meta: TranscriptMeta, events: TranscriptEvent[]) => ({ markdown: [...renderMarkdown(meta, events)].join(''), html: [...renderHtml(meta, events)].join('') });

describe('transcripts (D1)', () => {
  it('test_the_html_transcript_shows_a_bidi_override_in_an_answer_as_a_mark', () => {
    const { html, markdown } = both(META, transcriptEvents([{ type: 'assistant_text', payload: { text: 'open invoice\u202efdp.exe' } }]));
    for (const text of [html, markdown]) {
      expect(text).toContain('open invoice\\u{202e}fdp.exe');
      expect(text).not.toContain('\u202e');
    }
  });

  it('test_no_field_of_any_event_type_or_of_the_header_reaches_either_transcript_invisible', () => {
    const meta: TranscriptMeta = { title: HOSTILE_TEXT, conversationId: HOSTILE_SHORT, agent: HOSTILE_TEXT, exportedAt: HOSTILE_SHORT, events: 1, chainHead: HOSTILE_SHORT, uncertainRuns: [HOSTILE_SHORT] };
    const { markdown, html } = both(meta, transcriptEvents(hostileEvents(), `2026-03-01T${HOSTILE_SHORT}`));
    // The header's fields stay on their lines: none can forge a line of its own.
    expect(markdown.split('\n> A transcript')[0]!.split('\n').filter((line) => line !== '' && !/^(# |- )/.test(line))).toEqual([]);
    for (const text of [markdown, html]) {
      expect(firstUnsafe(text)).toBeNull();
      expect(text).toContain('\\u{e0069}\\u{e0067}\\u{e006e}');
      expect(text).toContain('⟨800 blanks⟩');
    }
  });
});
