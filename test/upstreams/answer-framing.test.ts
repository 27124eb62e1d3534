/**
 * How Ward reads answers off the wire where a real server cannot easily be made to send a given
 * byte split: a stdio server's stdout lines (an oversized one skipped, its id still read) and an
 * SSE answer stream (whether the answer came, and the last event id the SDK would resume from).
 */
import { describe, expect, it } from 'vitest';
import { SseAnswerScan } from '../../main/upstreams/answer-streams.js';
import { JsonRpcLines, type Framed } from '../../main/upstreams/json-rpc-lines.js';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

/** Feeds `text` split into pieces of `size` bytes; everything framed, in order. */
function frame(reader: JsonRpcLines, text: string, size: number): Framed[] {
  const all = bytes(text);
  const out: Framed[] = [];
  for (let i = 0; i < all.length; i += size) out.push(...reader.push(all.subarray(i, i + size)));
  return out;
}

describe('stdio lines', () => {
  it('test_skips_an_oversized_line_reading_its_top_level_id_wherever_it_stands_and_reads_the_next_line_whole', () => {
    const filler = 'x'.repeat(200);
    const idLast = JSON.stringify({ result: { content: [{ type: 'text', text: filler, id: 99 }] }, jsonrpc: '2.0', id: 7 });
    const idFirst = JSON.stringify({ jsonrpc: '2.0', id: 'req-"8"', result: { text: `${filler}"id":1,\\"id\\":2` } });
    const request = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'elicitation/create', params: { message: filler } });
    const notification = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { data: filler } });
    const small = JSON.stringify({ jsonrpc: '2.0', id: 9, result: {} });
    for (const size of [1, 7, 64, 4096]) {
      const framed = frame(new JsonRpcLines(100), `${idLast}\n${idFirst}\r\n${request}\n${notification}\n${small}\r\n`, size);
      expect(framed).toEqual([
        { kind: 'oversized', message: { id: 7, hasMethod: false } },
        { kind: 'oversized', message: { id: 'req-"8"', hasMethod: false } },
        { kind: 'oversized', message: { id: 3, hasMethod: true } },
        { kind: 'oversized', message: { id: undefined, hasMethod: true } },
        { kind: 'line', text: small },
      ]);
    }
  });

  it('test_reads_no_id_from_an_oversized_batch_or_one_whose_id_is_not_a_string_or_number', () => {
    const filler = 'y'.repeat(200);
    const framed = frame(new JsonRpcLines(100), `[{"jsonrpc":"2.0","id":1,"result":{"t":"${filler}"}}]\n{"jsonrpc":"2.0","id":{"n":1},"result":{"t":"${filler}"}}\n`, 33);
    expect(framed).toEqual([
      { kind: 'oversized', message: { id: undefined, hasMethod: false } },
      { kind: 'oversized', message: { id: undefined, hasMethod: false } },
    ]);
  });
});

describe('sse answer streams', () => {
  const answer = (id: number): string => JSON.stringify({ jsonrpc: '2.0', id, result: { content: [] } });
  const note = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 1 } });

  function scan(stream: string, id: number, size: number): SseAnswerScan {
    const scanner = new SseAnswerScan(id);
    const all = bytes(stream);
    for (let i = 0; i < all.length; i += size) scanner.feed(all.subarray(i, i + size));
    return scanner;
  }

  it('test_sees_the_answer_to_its_own_request_only_in_a_finished_message_event_whatever_the_line_ends_and_splits', () => {
    for (const size of [1, 5, 1024]) {
      expect(scan(`data: ${note}\n\nevent: message\r\ndata: ${answer(4)}\r\n\r\n`, 4, size)).toMatchObject({ answered: true, lastEventId: undefined });
      expect(scan(`data: ${answer(4)}\r\r`, 4, size).answered).toBe(true);
      expect(scan(`data: ${answer(5)}\r\r`, 4, size).answered).toBe(false);
      expect(scan(`event: other\ndata: ${answer(4)}\n\n`, 4, size).answered).toBe(false);
      // Not ended by a blank line: the SDK never dispatches it either.
      expect(scan(`data: ${answer(4)}\n`, 4, size).answered).toBe(false);
    }
  });

  it('test_keeps_the_last_event_id_of_a_dispatched_event_as_the_sdk_would_resume_from_it', () => {
    expect(scan('id: first\nretry: 50\ndata: \n\nid: second\ndata: \n\n', 1, 3).lastEventId).toBe('second');
    // An id in an event with no data line, or an empty one, is none the SDK takes.
    expect(scan('id: lonely\n\nid:\ndata: \n\n', 1, 3).lastEventId).toBeUndefined();
  });
});
