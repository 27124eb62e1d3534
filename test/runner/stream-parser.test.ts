import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { StreamJsonParser, parseStreamLine, type CliMessage } from '../../main/runner/stream-parser.js';

/** Real stdout of the pinned CLI (2.1.328) for a one-text-block turn. */
const RECORDED = fs.readFileSync(new URL('./data/cli-2.1.328-text-turn.jsonl', import.meta.url));

function feed(chunks: readonly Buffer[], maxLineBytes?: number): CliMessage[] {
  const messages: CliMessage[] = [];
  const parser = new StreamJsonParser((message) => messages.push(message), maxLineBytes);
  for (const chunk of chunks) parser.push(chunk);
  parser.end();
  return messages;
}

describe('stream-json parser', () => {
  it('test_reads_init_assistant_text_and_the_success_result_from_real_cli_bytes', () => {
    const kinds = feed([RECORDED]).map((message) => message.kind);
    expect(kinds).toEqual(['init', 'assistant_text', 'result']);
    const [init, text, result] = feed([RECORDED]);
    expect(init).toMatchObject({ kind: 'init', tools: [], mcpServers: [], version: '2.1.328' });
    expect(text).toEqual({ kind: 'assistant_text', text: 'Hello world', messageId: 'msg_x' });
    expect(result).toMatchObject({ kind: 'result', subtype: 'success', isError: false, usage: { inputTokens: 12, outputTokens: 5 } });
  });

  it('test_gives_the_same_messages_however_the_bytes_are_chunked_even_inside_a_multi_byte_character', () => {
    const withUtf8 = Buffer.concat([RECORDED, Buffer.from('{"type":"assistant","message":{"content":[{"type":"text","text":"grüße 🌍"}]}}\n')]);
    const whole = feed([withUtf8]);
    const bytewise = feed([...withUtf8].map((byte) => Buffer.from([byte])));
    expect(bytewise).toEqual(whole);
    expect(whole.at(-1)).toMatchObject({ kind: 'assistant_text', text: 'grüße 🌍' });
  });

  it('test_turns_garbage_lines_into_diagnostics_and_keeps_parsing', () => {
    const lines = RECORDED.toString('utf8').split('\n');
    const mixed = Buffer.from([lines[0], 'Error: Session ID 1 is already in use.', '\u0000\u0001binary', '{"type":', '[1,2]', lines[1], lines[2]].join('\n'));
    const messages = feed([mixed]);
    expect(messages.map((message) => (message.kind === 'diagnostic' ? `diagnostic:${message.reason}` : message.kind))).toEqual([
      'init',
      'diagnostic:unparseable',
      'diagnostic:unparseable',
      'diagnostic:unparseable',
      'diagnostic:unexpected_shape',
      'assistant_text',
      'result',
    ]);
    expect(messages[1]).toMatchObject({ detail: 'not JSON: Error: Session ID 1 is already in use.' });
    expect(messages[2]).toMatchObject({ detail: 'not JSON: ??binary' });
  });

  it('test_skips_an_oversized_line_with_one_diagnostic_without_buffering_it_and_reads_the_next_line', () => {
    const limit = 64 * 1024;
    const huge = Buffer.alloc(5 * limit, 'x');
    const lines = RECORDED.toString('utf8').split('\n');
    const chunks = [Buffer.from(`${lines[0]}\n{"type":"assistant","message":{"content":[{"type":"text","text":"`), huge, Buffer.from(`"}]}}\n${lines[1]}\n${lines[2]}\n`)];
    const messages = feed(chunks, limit);
    expect(messages.map((message) => message.kind)).toEqual(['init', 'diagnostic', 'assistant_text', 'result']);
    expect(messages[1]).toMatchObject({ reason: 'oversized' });
    expect((messages[1] as { bytes: number }).bytes).toBeGreaterThan(5 * limit);
  });

  it('test_reads_tool_use_tool_result_and_the_no_conversation_found_error_result', () => {
    expect(parseStreamLine('{"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_1","name":"mcp__ward__echo","input":{"text":"hi"}}]}}')).toEqual([
      { kind: 'tool_use', toolUseId: 'toolu_1', name: 'mcp__ward__echo', input: { text: 'hi' } },
    ]);
    expect(parseStreamLine('{"type":"user","message":{"content":[{"tool_use_id":"toolu_1","type":"tool_result","content":[{"type":"text","text":"héllo"}]}]}}')).toEqual([
      { kind: 'tool_result', toolUseId: 'toolu_1', isError: false, bytes: 6, text: 'héllo' },
    ]);
    expect(parseStreamLine('{"type":"result","subtype":"error_during_execution","is_error":true,"errors":["No conversation found with session ID: x"]}')).toEqual([
      expect.objectContaining({ kind: 'result', subtype: 'error_during_execution', isError: true, errors: ['No conversation found with session ID: x'] }),
    ]);
    expect(parseStreamLine('{"type":"result","subtype":"success"}')).toEqual([expect.objectContaining({ kind: 'diagnostic', reason: 'unexpected_shape' })]);
  });

  it('test_reads_the_clis_retry_notice_and_an_assistant_line_that_carries_a_provider_error', () => {
    // Shapes of the pinned CLI's SDKAPIRetryMessage and of an assistant message with `error`.
    const retry = '{"type":"system","subtype":"api_retry","attempt":2,"max_retries":10,"retry_delay_ms":1223.7,"error_status":529,"error":"overloaded","uuid":"u","session_id":"s"}';
    expect(parseStreamLine(retry)).toEqual([{ kind: 'api_retry', attempt: 2, maxRetries: 10, delayMs: 1223, status: 529, error: 'overloaded' }]);
    const noAnswer = '{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"retry_delay_ms":500,"error_status":null,"error":"unknown"}';
    expect(parseStreamLine(noAnswer)).toEqual([{ kind: 'api_retry', attempt: 1, maxRetries: 10, delayMs: 500, status: null, error: 'unknown' }]);
    const failed = '{"type":"assistant","error":"invalid_request","message":{"id":"m","content":[{"type":"text","text":"API Error: 400 bad"}]},"session_id":"s"}';
    expect(parseStreamLine(failed)).toEqual([{ kind: 'provider_error', error: 'invalid_request', text: 'API Error: 400 bad' }]);
  });
});
