import { describe, expect, it } from 'vitest';
import { TOOL_RESULT_PREVIEW_BYTES } from '../../../main/app/runs/event-bounds.js';
import type { JournalEvent } from '../../../main/store/journal.js';
import { publishToolAgent } from './agents.js';
import { closeHarnessesAfterEach, payloads, startHarness, types, type Harness } from './harness.js';

let harness: Harness | undefined;
closeHarnessesAfterEach();

const ANSWER = Array.from({ length: 24 }, (_, i) => `word${i}`).join(' ') + ' — grüße 🌍 done.';

describe('the answer streams from the real CLI (--include-partial-messages)', () => {
  it('test_journals_several_coalesced_deltas_before_the_final_text_committed_while_the_turn_still_runs_they_add_up_to_exactly_that_text', async () => {
    harness = await startHarness([{ blocks: [{ type: 'text', text: ANSWER }], deltaDelayMs: 40 }]);
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'Stream a long answer' });
    // A subscriber hears of deltas while the run is still going (the final text is not there yet).
    const seen: JournalEvent[] = [];
    const unsubscribe = harness.core.store(harness.ns).journal.subscribe(handle.conversationId, handle.cursor, (event) => seen.push(event));
    let runningWhenFirstDelta: string | undefined;
    const store = harness.core.store(harness.ns);
    const watcher = store.journal.subscribe(handle.conversationId, handle.cursor, (event) => {
      if (event.type === 'assistant_delta' && runningWhenFirstDelta === undefined) runningWhenFirstDelta = store.runs.get(handle.runId).state;
    });
    const outcome = await handle.done;
    unsubscribe();
    watcher();
    expect(outcome.state).toBe('succeeded');
    expect(runningWhenFirstDelta).toBe('running');

    const events = harness.events(handle.conversationId);
    expect(seen.map((event) => event.seq)).toEqual(events.map((event) => event.seq));
    const kinds = types(events);
    const deltas = payloads<{ text: string; messageIndex: number }>(events, 'assistant_delta');
    // 30 word-sized SSE deltas 40 ms apart, flushed at most every 50 ms: several events, not one per token.
    expect(deltas.length).toBeGreaterThanOrEqual(3);
    expect(deltas.length).toBeLessThan(30);
    expect(kinds.lastIndexOf('assistant_delta')).toBeLessThan(kinds.indexOf('assistant_text'));
    expect(deltas.every((delta) => delta.messageIndex === 0)).toBe(true);
    expect(deltas.map((delta) => delta.text).join('')).toBe(ANSWER);
    expect(payloads(events, 'assistant_text')).toEqual([{ text: ANSWER }]);
    expect(kinds.filter((kind) => kind !== 'assistant_delta')).toEqual(['run_started', 'user_prompt', 'assistant_text', 'usage', 'run_finished']);
  });

  it('test_numbers_the_deltas_of_each_text_block_after_the_one_before_across_a_tool_call', async () => {
    harness = await startHarness([
      // Words 80 ms apart: a block streams over most of a second, so even a CLI stalled by a loaded
      // machine delivers it in more than one flush interval (a block that arrives whole has no deltas).
      { blocks: [{ type: 'text', text: 'First I will call the echo tool with your words.' }, { type: 'tool_use', name: 'mcp__ward__fixture__echo', input: { text: 'hi' } }], deltaDelayMs: 80 },
      { blocks: [{ type: 'text', text: 'The echo tool answered hi, and that is the whole story.' }], deltaDelayMs: 80 },
    ]);
    await publishToolAgent(harness);
    const handle = harness.service.startTurn({ namespace: harness.ns, agent: 'tooly', prompt: 'echo hi' });
    expect((await handle.done).state).toBe('succeeded');
    const events = harness.events(handle.conversationId);
    const texts = payloads<{ text: string }>(events, 'assistant_text').map((payload) => payload.text);
    const deltas = payloads<{ text: string; messageIndex: number }>(events, 'assistant_delta');
    for (const index of [0, 1]) {
      const own = deltas.filter((delta) => delta.messageIndex === index);
      expect(own.length).toBeGreaterThan(0);
      expect(own.map((delta) => delta.text).join('')).toBe(texts[index]);
    }
    // Each block's deltas come before its final text; the second block's after the tool result.
    const kinds = types(events);
    expect(kinds.indexOf('assistant_delta')).toBeLessThan(kinds.indexOf('assistant_text'));
    const firstOfSecond = events.findIndex((event) => event.type === 'assistant_delta' && (event.payload as { messageIndex: number }).messageIndex === 1);
    expect(firstOfSecond).toBeGreaterThan(kinds.indexOf('tool_result'));
  });
});

describe('tool results carry a bounded preview for the timeline', () => {
  it('test_journals_the_start_of_the_result_the_model_got_cut_at_2_kib_and_the_error_text_of_a_failed_tool', async () => {
    harness = await startHarness([
      {
        blocks: [
          { type: 'tool_use', name: 'mcp__ward__fixture__echo', input: { text: 'line one\nline two \u202e evil' } },
          { type: 'tool_use', name: 'mcp__ward__fixture__huge', input: { bytes: 10_000 } },
          { type: 'tool_use', name: 'mcp__ward__fixture__fail', input: {} },
        ],
      },
      { blocks: [{ type: 'text', text: 'done' }] },
    ]);
    await publishToolAgent(harness, 'tooly', ['echo', 'huge', 'fail']);
    const handle = harness.service.startTurn({ namespace: harness.ns, agent: 'tooly', prompt: 'use the tools' });
    expect((await handle.done).state).toBe('succeeded');
    const results = payloads<{ tool: string; ok: boolean; bytes: number; preview: string; previewTruncated: boolean; errorCode: string | null }>(harness.events(handle.conversationId), 'tool_result');
    const byTool = Object.fromEntries(results.map((result) => [result.tool, result]));
    // Control and bidi characters are kept as data; the renderer shows them inert.
    expect(byTool.fixture__echo).toMatchObject({ ok: true, preview: 'line one\nline two \u202e evil', previewTruncated: false });
    expect(byTool.fixture__huge).toMatchObject({ ok: true, bytes: 10_000, previewTruncated: true });
    expect(byTool.fixture__huge!.preview).toBe('x'.repeat(TOOL_RESULT_PREVIEW_BYTES));
    expect(byTool.fixture__fail).toMatchObject({ ok: false, previewTruncated: false });
    expect(byTool.fixture__fail!.preview).toContain('the fixture failed on purpose');
  });
});
