/** Ward's one MCP client stack (main/upstreams): stdio children Ward owns, HTTP limits, failure codes, definitions, pinning hash. */
import { getEventListeners } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SdkError, SdkErrorCode, SdkHttpError } from '@modelcontextprotocol/client';
import { afterAll, describe, expect, it } from 'vitest';
import { WardError } from '../../main/base/errors.js';
import type { PinnedToolRoute } from '../../main/upstreams/types.js';
import { cappedFetch, SseEventMeter } from '../../main/upstreams/capped-fetch.js';
import { parseUpstreamDefinitions } from '../../main/upstreams/definitions.js';
import { UpstreamError, classifyUpstreamError } from '../../main/upstreams/errors.js';
import { pinTools } from '../../main/upstreams/pin.js';
import { schemaHash } from '../../main/upstreams/schema-hash.js';
import { INHERITED_ENV } from '../../main/upstreams/stdio-transport.js';
import { openUpstreams } from '../../main/upstreams/upstreams.js';
import { startHttpFixture } from '../fixtures/mcp-servers/http.js';
import { pin, STDIO_FIXTURE } from '../broker/helpers.js';
import { alive } from '../support/processes.js';

const dir = mkdtempSync(join(tmpdir(), 'ward-upstreams-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function call(route: PinnedToolRoute | undefined, args: Record<string, unknown>) {
  return [route!, args, new AbortController().signal] as const;
}

describe('stdio upstreams', () => {
  it('test_a_call_to_a_server_that_does_not_start_says_it_did_not_start_and_was_not_called_and_keeps_its_stderr', async () => {
    const missing = join(dir, 'no-such-server.mjs');
    const upstreams = await openUpstreams({ gone: { type: 'stdio', command: process.execPath, args: [missing] } });
    const route: PinnedToolRoute = { exposedName: 'echo', upstream: 'gone', upstreamName: 'echo', description: '', inputSchema: { type: 'object' }, schemaHash: 'x' };
    const outcome = await upstreams.callTool(...call(route, {}));
    expect(outcome).toMatchObject({ ok: false, errorCode: 'not_started', message: expect.stringMatching(/^The upstream server did not start, so the tool was not called\./) });
    expect(JSON.stringify(outcome)).not.toContain('may or may not');
    expect(upstreams.stderr('gone')).toContain(`Cannot find module '${missing}'`);
    await upstreams.close();
  });

  it('test_calls_a_tool_on_a_stdio_server_and_kills_the_server_on_close', async () => {
    const upstreams = await openUpstreams({ fx: { type: 'stdio', command: process.execPath, args: STDIO_FIXTURE } });
    const [echo] = await pin(upstreams, 'fx', ['echo']);
    expect(await upstreams.callTool(...call(echo, { text: 'via stdio' }))).toEqual({
      ok: true,
      isError: false,
      bytes: 9,
      content: [{ type: 'text', text: 'via stdio' }],
    });
    const pid = upstreams.pid('fx')!;
    expect(alive(pid)).toBe(true);
    await upstreams.close();
    expect(alive(pid)).toBe(false);
    expect(await upstreams.callTool(...call(echo, { text: 'after close' }))).toMatchObject({ ok: false, errorCode: 'closed' });
  });

  it('test_gives_the_server_only_the_allowlisted_environment_plus_named_values_and_keeps_its_stderr_in_memory', async () => {
    const dump = join(dir, 'env.json');
    process.env.WARD_TEST_PARENT_SECRET = 'parent-secret-canary-77a1';
    try {
      const upstreams = await openUpstreams({
        fx: { type: 'stdio', command: process.execPath, args: STDIO_FIXTURE, env: { FIXTURE_ENV_DUMP: dump, FIXTURE_TOKEN: 'named-value' } },
      });
      await upstreams.listTools('fx');
      const env = JSON.parse(readFileSync(dump, 'utf8')) as Record<string, string>;
      const allowed = new Set<string>([...INHERITED_ENV, 'FIXTURE_ENV_DUMP', 'FIXTURE_TOKEN']);
      expect(Object.keys(env).filter((name) => !allowed.has(name))).toEqual([]);
      expect(env.FIXTURE_TOKEN).toBe('named-value');
      expect(env.PATH).toBe(process.env.PATH);
      expect(JSON.stringify(env)).not.toContain('parent-secret-canary-77a1');
      expect(upstreams.stderr('fx')).toContain('fixture stdio server started');
      await upstreams.close();
    } finally {
      delete process.env.WARD_TEST_PARENT_SECRET;
    }
  });

  it('test_refuses_a_stdio_message_over_the_size_bound_as_message_too_large_and_the_same_server_answers_the_next_call', async () => {
    const upstreams = await openUpstreams({ fx: { type: 'stdio', command: process.execPath, args: STDIO_FIXTURE } }, { maxMessageBytes: 64 * 1024 });
    const [huge, echo] = await pin(upstreams, 'fx', ['huge', 'echo']);
    const pid = upstreams.pid('fx')!;
    expect(await upstreams.callTool(...call(huge, { bytes: 100 * 1024 }))).toMatchObject({ ok: false, errorCode: 'message_too_large', message: expect.stringContaining('65536 bytes') });
    expect(await upstreams.callTool(...call(echo, { text: 'after the refusal' }))).toMatchObject({ ok: true, content: [{ type: 'text', text: 'after the refusal' }] });
    expect(upstreams.pid('fx')).toBe(pid);
    await upstreams.close();
    expect(alive(pid)).toBe(false);
  });

  it('test_ends_a_stdio_server_that_writes_something_other_than_json_rpc_on_stdout_failing_the_call_as_protocol_error', async () => {
    const upstreams = await openUpstreams({ fx: { type: 'stdio', command: process.execPath, args: STDIO_FIXTURE, env: { FIXTURE_GARBAGE_ON_CALL: '1' } } });
    const [echo] = await pin(upstreams, 'fx', ['echo']);
    const pid = upstreams.pid('fx')!;
    expect(await upstreams.callTool(...call(echo, { text: 'x' }))).toMatchObject({ ok: false, errorCode: 'protocol_error' });
    await upstreams.close();
    expect(alive(pid)).toBe(false);
  });

  it('test_reports_a_command_that_does_not_exist_as_unreachable', async () => {
    const upstreams = await openUpstreams({ fx: { type: 'stdio', command: join(dir, 'no-such-server') } });
    const route: PinnedToolRoute = { exposedName: 'fx_echo', upstream: 'fx', upstreamName: 'echo', description: '', inputSchema: { type: 'object' }, schemaHash: 'x' };
    expect(await upstreams.callTool(...call(route, {}))).toMatchObject({ ok: false, errorCode: 'unreachable' });
    await expect(upstreams.listTools('fx')).rejects.toMatchObject({ code: 'unreachable' });
    await upstreams.close();
  });

  it('test_refuses_a_stdio_tool_whose_schema_changed_since_pinning', async () => {
    const pinnedFrom = await openUpstreams({ fx: { type: 'stdio', command: process.execPath, args: STDIO_FIXTURE } });
    const [echo] = await pin(pinnedFrom, 'fx', ['echo']);
    await pinnedFrom.close();
    const log = join(dir, 'calls.log');
    const changed = await openUpstreams({
      fx: { type: 'stdio', command: process.execPath, args: STDIO_FIXTURE, env: { FIXTURE_SCHEMA_VARIANT: '2', FIXTURE_CALL_LOG: log } },
    });
    expect(await changed.callTool(...call(echo, { text: 'x' }))).toMatchObject({ ok: false, errorCode: 'schema_changed' });
    expect(() => readFileSync(log)).toThrow();
    await changed.close();
  });
});

describe('http upstreams', () => {
  it.each([
    ['JSON body', false],
    ['SSE event', true],
  ])('test_fails_an_http_%s_over_the_message_bound_as_too_large', async (_kind, sse) => {
    const fixture = await startHttpFixture({ sse });
    const upstreams = await openUpstreams({ fx: { type: 'http', url: fixture.url } }, { maxMessageBytes: 64 * 1024 });
    const [huge, echo] = await pin(upstreams, 'fx', ['huge', 'echo']);
    expect(await upstreams.callTool(...call(huge, { bytes: 100 * 1024 }))).toMatchObject({ ok: false, errorCode: 'too_large' });
    expect(await upstreams.callTool(...call(echo, { text: 'still fine' }))).toMatchObject({ ok: true, content: [{ type: 'text', text: 'still fine' }] });
    await upstreams.close();
    await fixture.close();
  });

  it.each([
    ['LF', false],
    ['CRLF', true],
  ])('test_bounds_each_sse_event_of_a_%s_framed_stream_on_its_own_not_the_stream_as_one_growing_event', async (_framing, crlf) => {
    // One response stream: seven 16 KiB log messages, then a 16 KiB result; 128 KiB in all, every event under the 64 KiB bound.
    const fixture = await startHttpFixture({ sse: true, crlf });
    const upstreams = await openUpstreams({ fx: { type: 'http', url: fixture.url } }, { maxMessageBytes: 64 * 1024 });
    const [huge] = await pin(upstreams, 'fx', ['huge']);
    expect(await upstreams.callTool(...call(huge, { bytes: 16 * 1024, parts: 8 }))).toMatchObject({ ok: true, bytes: 16 * 1024 });
    // One event over the bound still fails, whatever the line ends.
    expect(await upstreams.callTool(...call(huge, { bytes: 100 * 1024 }))).toMatchObject({ ok: false, errorCode: 'too_large' });
    await upstreams.close();
    await fixture.close();
  });

  it.each([
    ['JSON bodies', false],
    ['SSE streams', true],
  ])("test_lets_go_of_the_connections_lifetime_signal_once_%s_are_read_yet_still_aborts_an_in_flight_request_with_it", async (_kind, sse) => {
    // undici would otherwise hold one listener per request until GC and warn of a leak after 1,500 calls.
    const fixture = await startHttpFixture({ sse });
    const lifetime = new AbortController();
    const capped = cappedFetch(1024 * 1024, () => undefined);
    const post = (id: number, name: string, args: Record<string, unknown>): Promise<Response> =>
      capped(fixture.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }),
        signal: lifetime.signal,
      });
    for (let id = 1; id <= 20; id++) expect(await (await post(id, 'echo', { text: `call ${id}` })).text()).toContain(`call ${id}`);
    expect(getEventListeners(lifetime.signal, 'abort')).toHaveLength(0);
    const slow = post(21, 'slow', { ms: 5_000 }).then((response) => response.text());
    setTimeout(() => lifetime.abort(new Error('connection closed')), 50);
    await expect(slow).rejects.toThrow('connection closed');
    await fixture.close();
  });

  it('test_reports_a_call_cancelled_by_the_caller_as_cancelled_and_an_http_401_as_unauthorized', async () => {
    const fixture = await startHttpFixture({ token: 'right' });
    const good = await openUpstreams({ fx: { type: 'http', url: fixture.url, headers: { Authorization: 'Bearer right' } } });
    const [slow] = await pin(good, 'fx', ['slow']);
    const controller = new AbortController();
    const pending = good.callTool(slow!, { ms: 5_000 }, controller.signal);
    controller.abort(new DOMException('stop', 'AbortError'));
    expect(await pending).toMatchObject({ ok: false, errorCode: 'cancelled' });
    const bad = await openUpstreams({ fx: { type: 'http', url: fixture.url, headers: { Authorization: 'Bearer wrong' } } });
    expect(await bad.callTool(...call(slow, { ms: 1 }))).toMatchObject({ ok: false, errorCode: 'unauthorized' });
    await good.close();
    await bad.close();
    await fixture.close();
  });
});

describe('SseEventMeter', () => {
  const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

  it('test_ends_an_event_at_a_blank_line_whether_lines_end_in_lf_crlf_or_cr_even_mixed_and_split_across_chunks', () => {
    const meter = new SseEventMeter();
    expect(meter.feed(bytes('data: 12345\r'))).toBe(12);
    // The LF of that CRLF arrives in the next chunk, then the blank line that ends the event.
    expect(meter.feed(bytes('\n\r\n'))).toBe(14);
    expect(meter.feed(bytes('data: ab\n\n'))).toBe(10);
    expect(meter.feed(bytes('data: abc\r\rdata: x'))).toBe(11);
    expect(meter.feed(bytes('\n'))).toBe(8);
  });

  it('test_reports_an_event_over_the_bound_even_when_it_ends_within_the_same_chunk', () => {
    expect(new SseEventMeter().feed(bytes(`data: ${'x'.repeat(100)}\r\n\r\ndata: y\r\n`))).toBe(109);
  });
});

describe('upstream access failures (B6)', () => {
  it('test_reports_http_403_as_forbidden_distinct_from_401_and_from_an_unreachable_server', async () => {
    const forbidden = await startHttpFixture({ forbidden: true });
    const upstreams = await openUpstreams({ fx: { type: 'http', url: forbidden.url } });
    const route: PinnedToolRoute = { exposedName: 'fx_echo', upstream: 'fx', upstreamName: 'echo', description: '', inputSchema: { type: 'object' }, schemaHash: 'x' };
    const outcome = await upstreams.callTool(...call(route, {}));
    expect(outcome).toMatchObject({ ok: false, errorCode: 'forbidden' });
    expect(JSON.stringify(outcome)).not.toContain('must not be forwarded');
    await upstreams.close();
    await forbidden.close();
  });
});

describe('classifyUpstreamError (B5, B6)', () => {
  it("test_reads_types_status_and_errno_codes_only_the_upstreams_words_stay_in_cause_never_in_the_message", () => {
    const said = new SdkHttpError(SdkErrorCode.ClientHttpNotImplemented, 'Error POSTing to endpoint: 403 body that must not be forwarded', { status: 403 });
    const failure = classifyUpstreamError(said);
    expect(failure).toMatchObject({ code: 'forbidden', detail: 'HTTP 403' });
    expect(failure.message).not.toContain('must not be forwarded');
    expect(failure.cause).toBe(said);
    expect(classifyUpstreamError(new TypeError('fetch failed', { cause: Object.assign(new Error('x'), { code: 'ECONNREFUSED' }) }))).toMatchObject({ code: 'unreachable', detail: 'ECONNREFUSED' });
    expect(classifyUpstreamError(new WardError('signin_timeout', 'no sign-in came back')).code).toBe('not_signed_in');
  });

  it('test_says_why_an_attempt_really_stopped_its_own_signal_or_why_the_session_ended', () => {
    const timedOut = new AbortController();
    timedOut.abort(new DOMException('tool timeout', 'TimeoutError'));
    expect(classifyUpstreamError(new Error('This operation was aborted'), { signal: timedOut.signal }).code).toBe('timed_out');
    const cancelled = new AbortController();
    cancelled.abort(new DOMException('cancelled by the child', 'AbortError'));
    expect(classifyUpstreamError(new Error('This operation was aborted'), { signal: cancelled.signal }).code).toBe('cancelled');
    const garbage = new UpstreamError('protocol_error', 'the server wrote something other than JSON-RPC on stdout');
    expect(classifyUpstreamError(new SdkError(SdkErrorCode.ConnectionClosed, 'Connection closed'), { ended: garbage })).toBe(garbage);
    expect(classifyUpstreamError(new SdkError(SdkErrorCode.ConnectionClosed, 'Connection closed')).code).toBe('closed');
  });
});

describe('upstream definitions (L1)', () => {
  it('test_refuses_http_to_a_non_loopback_host_unless_explicitly_allowed', () => {
    expect(() => parseUpstreamDefinitions({ a: { type: 'http', url: 'http://mcp.example.com/mcp' } })).toThrow(/http:\/\/ is allowed only for loopback/);
    expect(parseUpstreamDefinitions({ a: { type: 'http', url: 'http://mcp.example.com/mcp', allowInsecureHttp: true } }).a).toMatchObject({ type: 'http' });
    expect(parseUpstreamDefinitions({ a: { type: 'http', url: 'http://127.0.0.1:9/mcp' } }).a).toMatchObject({ type: 'http' });
    expect(parseUpstreamDefinitions({ a: { type: 'http', url: 'https://mcp.example.com/mcp' } }).a).toMatchObject({ type: 'http' });
  });

  it('test_refuses_malformed_definitions_with_a_message_naming_the_problem_never_a_secret_value', () => {
    expect(() => parseUpstreamDefinitions({ a: { type: 'ftp' } })).toThrow('upstream "a": type must be "stdio" or "http"');
    expect(() => parseUpstreamDefinitions({ a: JSON.parse('{"type":"stdio","command":"x","shell":true}') })).toThrow('upstream "a": unknown field "shell"');
    expect(() => parseUpstreamDefinitions({ a: { type: 'stdio', command: 'x', args: 'a b' } })).toThrow('args must be an array of strings');
    expect(() => parseUpstreamDefinitions({ a: { type: 'http', url: 'https://u:p@x.example/mcp' } })).toThrow('must not carry credentials');
    expect(() => parseUpstreamDefinitions({ a: { type: 'http', url: 'https://x.example/mcp', headers: { Authorization: 'Bearer secret-canary\nX: y' } } })).toThrow(
      /headers\.Authorization must be a single-line string$/,
    );
    expect(() => parseUpstreamDefinitions({ 'bad name': { type: 'stdio', command: 'x' } })).toThrow(/the name must be/);
    expect(() => parseUpstreamDefinitions([])).toThrow(/keyed by upstream name/);
  });
});

describe('pinTools (B3)', () => {
  it('test_pins_the_live_schema_with_its_hash_and_names_a_tool_the_upstream_lacks', async () => {
    const fixture = await startHttpFixture();
    const upstreams = await openUpstreams({ fx: { type: 'http', url: fixture.url } });
    const [echo] = await pinTools(upstreams, [{ upstream: 'fx', name: 'echo', exposedName: 'say' }]);
    expect(echo).toMatchObject({ exposedName: 'say', upstream: 'fx', upstreamName: 'echo', description: 'Echoes text' });
    expect(echo!.schemaHash).toBe(schemaHash(echo!.inputSchema));
    await expect(pinTools(upstreams, [{ upstream: 'fx', name: 'nope' }])).rejects.toThrow('upstream "fx" has no tool "nope"');
    await expect(pinTools(upstreams, [{ upstream: 'fx', name: 'echo', exposedName: 'has space' }])).rejects.toThrow(/choose an exposed name/);
    await upstreams.close();
    await fixture.close();
  });
});

describe('schemaHash (B3)', () => {
  it('test_ignores_key_order_and_changes_with_any_schema_change', () => {
    const a = { type: 'object', properties: { x: { type: 'string' }, y: { type: 'number' } }, required: ['x'] };
    const b = { required: ['x'], properties: { y: { type: 'number' }, x: { type: 'string' } }, type: 'object' };
    expect(schemaHash(a)).toBe(schemaHash(b));
    expect(schemaHash(a)).toMatch(/^[0-9a-f]{64}$/);
    expect(schemaHash({ ...a, required: ['x', 'y'] })).not.toBe(schemaHash(a));
    expect(schemaHash({ ...a, required: ['y', 'x'] })).not.toBe(schemaHash({ ...a, required: ['x', 'y'] }));
  });
});
