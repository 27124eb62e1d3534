import { describe, expect, it } from 'vitest';
import { TextDeltaCoalescer, type AssistantDelta } from '../../main/runner/text-deltas.js';

const SECRET = 'sk-ant-canary-0123456789abcdef';

function coalescer(secrets: string[] = []) {
  let clock = 0;
  const emitted: AssistantDelta[] = [];
  const redact = (text: string) => secrets.reduce((out, secret) => out.split(secret).join('[redacted]'), text);
  const c = new TextDeltaCoalescer({ emit: (delta) => emitted.push(delta), redact, secrets: () => secrets, onError: (error) => { throw error; }, intervalMs: 50, maxBytes: 1024, now: () => clock });
  return { c, emitted, advance: (ms: number) => (clock += ms) };
}

describe('coalescing text deltas for the journal', () => {
  it('test_a_block_that_arrives_whole_within_one_interval_needs_no_deltas_at_all', () => {
    const { c, emitted } = coalescer();
    c.push('Hello ');
    c.push('world');
    c.afterChunk();
    c.complete();
    c.close();
    expect(emitted).toEqual([]);
  });

  it('test_flushes_at_most_once_per_interval_sooner_at_1_kib_and_the_rest_when_the_final_text_comes', () => {
    const { c, emitted, advance } = coalescer();
    c.push('a');
    c.afterChunk();
    advance(20);
    c.push('b');
    c.afterChunk();
    expect(emitted).toEqual([]);
    advance(30);
    c.push('c');
    c.afterChunk();
    expect(emitted).toEqual([{ text: 'abc', messageIndex: 0 }]);
    c.push('y'.repeat(1024));
    c.afterChunk();
    expect(emitted[1]).toEqual({ text: 'y'.repeat(1024), messageIndex: 0 });
    c.push('z');
    c.complete();
    expect(emitted[2]).toEqual({ text: 'z', messageIndex: 0 });
    // The next block is numbered after the first.
    c.push('next');
    advance(50);
    c.afterChunk();
    c.close();
    expect(emitted[3]).toEqual({ text: 'next', messageIndex: 1 });
  });

  it('test_never_lets_a_secret_split_across_deltas_through_a_possible_start_is_held_back_until_it_is_settled', () => {
    const { c, emitted, advance } = coalescer([SECRET]);
    c.push('the key is ');
    advance(50);
    c.afterChunk();
    c.push(SECRET.slice(0, 10));
    advance(50);
    c.afterChunk();
    c.push(SECRET.slice(10));
    c.push(' ok');
    advance(50);
    c.afterChunk();
    c.complete();
    const all = emitted.map((delta) => delta.text).join('');
    expect(all).toBe('the key is [redacted] ok');
    for (const delta of emitted) expect(delta.text).not.toContain(SECRET.slice(0, 10));
  });

  it('test_a_stopped_turn_keeps_what_streamed_including_text_still_waiting', () => {
    const { c, emitted, advance } = coalescer();
    c.push('partial ');
    advance(50);
    c.afterChunk();
    c.push('answer');
    c.finish();
    expect(emitted.map((delta) => delta.text).join('')).toBe('partial answer');
  });
});
