// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import { ToolCallEntry } from '../../renderer/src/components/Timeline.js';
import { applyEvents } from '../../renderer/src/state/apply-events.js';
import { EMPTY_CONVERSATION, type TimelineItem } from '../../renderer/src/state/timeline.js';
import { RUN_STARTED, viewFeed } from '../support/events.js';
import { click, render } from './render.js';

const AT = '2026-03-01T12:00:00.000Z';
const texts = (items: readonly TimelineItem[]) => items.map((item) => (item.kind === 'tool' ? `[${item.tool}]` : item.text));

describe('the chat text grows as deltas arrive', () => {
  it('test_appends_each_delta_to_the_answer_then_the_final_text_replaces_what_they_built_up', () => {
    const event = viewFeed();
    let state = applyEvents(EMPTY_CONVERSATION, [event('run_started', RUN_STARTED), event('user_prompt', { text: 'hi' }), event('assistant_delta', { text: 'Hel', messageIndex: 0 })]);
    expect(texts(state.items)).toEqual(['hi', 'Hel']);
    state = applyEvents(state, [event('assistant_delta', { text: 'lo, wor', messageIndex: 0 })]);
    expect(texts(state.items)).toEqual(['hi', 'Hello, wor']);
    // The final text is authoritative, even where it differs from the sum of the deltas.
    state = applyEvents(state, [event('assistant_text', { text: 'Hello, world!' })]);
    expect(texts(state.items)).toEqual(['hi', 'Hello, world!']);
    expect(state.items[1]).toMatchObject({ kind: 'assistant', streaming: null });
  });

  it('test_a_second_block_of_the_same_run_streams_after_the_first_and_one_after_a_tool_call_starts_a_new_message', () => {
    const event = viewFeed();
    const state = applyEvents(EMPTY_CONVERSATION, [
      event('run_started', RUN_STARTED),
      event('assistant_delta', { text: 'One', messageIndex: 0 }),
      event('assistant_text', { text: 'One.' }),
      event('assistant_delta', { text: 'Tw', messageIndex: 1 }),
      event('assistant_text', { text: 'Two.' }),
      event('tool_call', { toolUseId: 't1', tool: 'echo', arguments: {} }),
      event('assistant_delta', { text: 'Thr', messageIndex: 2 }),
    ]);
    expect(texts(state.items)).toEqual(['One.\n\nTwo.', '[echo]', 'Thr']);
  });

  it('test_replaying_from_any_cursor_gives_the_same_text_as_following_live_j1', () => {
    const event = viewFeed();
    const events = [
      event('run_started', RUN_STARTED),
      event('assistant_delta', { text: 'a', messageIndex: 0 }),
      event('assistant_delta', { text: 'b', messageIndex: 0 }),
      event('assistant_text', { text: 'ab' }),
      event('assistant_delta', { text: 'c', messageIndex: 1 }),
      event('run_finished', { state: 'stopped', reason: 'stopped by the user' }),
    ];
    const once = applyEvents(EMPTY_CONVERSATION, events);
    let live = EMPTY_CONVERSATION;
    for (const one of events) live = applyEvents(live, [one]);
    expect(live).toEqual(once);
    // A stopped block keeps the text that streamed before the stop.
    expect(texts(once.items)).toEqual(['ab\n\nc', 'Stopped']);
  });

  it("test_keeps_another_runs_deltas_out_of_this_runs_answer", () => {
    const event = viewFeed();
    const state = applyEvents(EMPTY_CONVERSATION, [event('assistant_text', { text: 'earlier answer' }, AT, 'run-0'), event('assistant_delta', { text: 'new', messageIndex: 0 }, AT, 'run-1')]);
    expect(texts(state.items)).toEqual(['earlier answer', 'new']);
  });
});

describe('a tool entry shows the result or error preview', () => {
  it('test_shows_the_preview_main_journaled_wards_error_code_before_an_error_the_clis_error_as_its_sentence_and_a_cut_preview_as_cut', () => {
    const event = viewFeed();
    const state = applyEvents(EMPTY_CONVERSATION, [
      event('tool_call', { toolUseId: 't1', tool: 'echo', arguments: { text: 'hi' } }),
      event('tool_result', { toolUseId: 't1', tool: 'echo', ok: true, bytes: 2, durationMs: 3, errorCode: null, preview: 'hi', previewTruncated: false }),
      event('tool_call', { toolUseId: 't2', tool: 'fail', arguments: {} }),
      event('tool_result', { toolUseId: 't2', tool: 'fail', ok: false, bytes: 29, durationMs: 3, errorCode: 'tool_error', preview: 'the fixture failed on purpose', previewTruncated: false }),
      event('tool_call', { toolUseId: 't4', tool: 'far', arguments: {} }),
      event('tool_result', { toolUseId: 't4', tool: 'far', ok: false, bytes: 7, durationMs: 3, errorCode: 'unreachable', preview: 'refused', previewTruncated: false }),
      event('tool_call', { toolUseId: 't3', tool: 'huge', arguments: {} }),
      event('tool_result', { toolUseId: 't3', tool: 'huge', ok: true, bytes: 10_000, durationMs: 3, errorCode: null, preview: 'xxxx', previewTruncated: true }),
    ]);
    const outputs = state.items.map((item) => (item.kind === 'tool' ? [item.status, item.output] : null));
    expect(outputs).toEqual([
      ['ok', 'hi'],
      // The CLI's own failure reads as the sentence (issue 31); Ward's codes still name the cause.
      ['error', 'the fixture failed on purpose'],
      ['error', 'unreachable: refused'],
      ['ok', 'xxxx… (10000 bytes in all)'],
    ]);
  });

  it('test_renders_the_preview_as_inert_text_markup_stays_text_bidi_and_control_characters_show_as_escapes', async () => {
    const event = viewFeed();
    const hostile = '<img src=x onerror="globalThis.pwned=1"> \u202eevil\u200b\u0007\nnext line';
    const state = applyEvents(EMPTY_CONVERSATION, [
      event('tool_call', { toolUseId: 't1', tool: 'echo', arguments: {} }),
      event('tool_result', { toolUseId: 't1', tool: 'echo', ok: true, bytes: 60, durationMs: 1, errorCode: null, preview: hostile, previewTruncated: false }),
    ]);
    const item = state.items[0] as Extract<TimelineItem, { kind: 'tool' }>;
    const view = await render(<ToolCallEntry item={item} />);
    await click(view.container.querySelector('.tool-summary') as HTMLButtonElement);
    const output = view.container.querySelector('.tool-output')!;
    expect(output.textContent).toBe('<img src=x onerror="globalThis.pwned=1"> \\u{202e}evil\\u{200b}\\u{7}\nnext line');
    expect(output.querySelector('img')).toBeNull();
    expect((globalThis as { pwned?: number }).pwned).toBeUndefined();
    await view.unmount();
  });
});
