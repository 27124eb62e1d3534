/** B3–B7: what happens to a call once it is through the door. */
import fs from 'node:fs';
import path from 'node:path';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { Broker } from '../../main/broker/broker.js';
import type { BrokerEvent } from '../../main/broker/types.js';
import { openUpstreams, type Upstreams } from '../../main/upstreams/upstreams.js';
import { FAIL_CANARY } from '../fixtures/mcp-servers/tools.js';
import { startHttpFixture, type HttpFixture } from '../fixtures/mcp-servers/http.js';
import { STDIO_SERVER } from '../connections/support.js';
import { tempDir } from '../support/temp.js';
import { connectClient, pin, registerRun, textOf } from './helpers.js';

const UPSTREAM_CANARY = 'upstream-credential-canary-93c2e1';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function finished(events: readonly BrokerEvent[]): Extract<BrokerEvent, { kind: 'tool_call_finished' }>[] {
  return events.filter((event): event is Extract<BrokerEvent, { kind: 'tool_call_finished' }> => event.kind === 'tool_call_finished');
}

let broker: Broker;
let fixture: HttpFixture;
let authFixture: HttpFixture;
let upstreams: Upstreams;

beforeAll(async () => {
  broker = await Broker.start();
  fixture = await startHttpFixture();
  authFixture = await startHttpFixture({ token: UPSTREAM_CANARY });
  upstreams = await openUpstreams({
    fx: { type: 'http', url: fixture.url },
    authed: { type: 'http', url: authFixture.url, headers: { Authorization: `Bearer ${UPSTREAM_CANARY}` } },
  });
});

afterAll(async () => {
  await broker.close();
  await upstreams.close();
  await fixture.close();
  await authFixture.close();
});

describe('broker calls (B3–B7)', () => {
  it('test_passes_a_structured_result_with_its_pinned_output_schema_and_a_resource_link_through_to_the_child', async () => {
    const routes = await pin(upstreams, 'fx', ['sum', 'link']);
    const run = registerRun(broker, 'structured', routes, upstreams);
    const client = await connectClient(run.registration.url, run.registration.capability);
    const listed = await client.listTools();
    expect(listed.tools.find((tool) => tool.name === 'fx_sum')?.outputSchema).toEqual({ type: 'object', properties: { sum: { type: 'number' }, pad: { type: 'string' } }, required: ['sum'] });
    // The child's SDK client checks the structured result against that schema.
    expect(await client.callTool({ name: 'fx_sum', arguments: { a: 2, b: 3 } })).toMatchObject({ structuredContent: { sum: 5, pad: '' }, content: [{ type: 'text', text: '{"sum":5}' }] });
    expect(await client.callTool({ name: 'fx_link', arguments: {} })).toEqual({
      isError: false,
      content: [
        { type: 'text', text: 'see the report' },
        { type: 'resource_link', uri: 'file:///reports/q3.pdf', name: 'q3.pdf', title: 'Q3 report', mimeType: 'application/pdf' },
      ],
    });
    // The 1 MiB cap counts the structured result too (B5).
    const big = await client.callTool({ name: 'fx_sum', arguments: { a: 1, b: 1, pad: 1024 * 1024 } });
    expect(big).toMatchObject({ isError: true, content: [{ type: 'text', text: expect.stringContaining('[too_large]') }] });
    expect(big.structuredContent).toBeUndefined();
    await client.close();
    await run.registration.close();
  });


  it('test_refuses_a_tool_name_that_is_not_pinned_without_reaching_the_upstream', async () => {
    const run = registerRun(broker, 'unknown-tool', await pin(upstreams, 'fx', ['echo']), upstreams);
    const client = await connectClient(run.registration.url, run.registration.capability);
    const before = fixture.calls.get('slow') ?? 0;
    const result = await client.callTool({ name: 'fx_slow', arguments: { ms: 1 } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('Unknown tool "fx_slow"');
    expect(fixture.calls.get('slow') ?? 0).toBe(before);
    expect(run.events).toEqual([{ kind: 'call_refused', tool: 'fx_slow', reason: expect.stringContaining('not pinned') }]);
    await client.close();
    await run.registration.close();
  });

  it('test_re_checks_the_run_on_every_call_a_run_that_stopped_accepting_refuses_the_next_call_b4', async () => {
    const run = registerRun(broker, 'stopping', await pin(upstreams, 'fx', ['echo']), upstreams);
    const client = await connectClient(run.registration.url, run.registration.capability);
    expect(textOf(await client.callTool({ name: 'fx_echo', arguments: { text: 'one' } }))).toBe('one');
    run.accepting = false;
    const refused = await client.callTool({ name: 'fx_echo', arguments: { text: 'two' } });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain('not accepting tool calls');
    await client.close();
    await run.registration.close();
  });

  it('test_applies_the_permission_check_and_reports_its_reason_b4', async () => {
    const run = registerRun(broker, 'authz', await pin(upstreams, 'fx', ['echo']), upstreams, {
      authorizeToolCall: async (_tool, args) => (args.text === 'allowed' ? true : 'the grant for fx/echo was revoked'),
    });
    const client = await connectClient(run.registration.url, run.registration.capability);
    expect(textOf(await client.callTool({ name: 'fx_echo', arguments: { text: 'allowed' } }))).toBe('allowed');
    const denied = await client.callTool({ name: 'fx_echo', arguments: { text: 'other' } });
    expect(denied.isError).toBe(true);
    expect(textOf(denied)).toContain('the grant for fx/echo was revoked');
    await client.close();
    await run.registration.close();
  });

  it('test_discards_an_upstream_result_over_1_mib_as_too_large_instead_of_forwarding_it_b5', async () => {
    const run = registerRun(broker, 'huge', await pin(upstreams, 'fx', ['huge']), upstreams);
    const client = await connectClient(run.registration.url, run.registration.capability);
    const result = await client.callTool({ name: 'fx_huge', arguments: { bytes: 1024 * 1024 + 1 } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('[too_large]');
    expect(textOf(result)).not.toContain('xxxx');
    expect(finished(run.events)).toMatchObject([{ ok: false, errorCode: 'too_large' }]);
    const fits = await client.callTool({ name: 'fx_huge', arguments: { bytes: 1024 * 1024 } });
    expect(textOf(fits)).toHaveLength(1024 * 1024);
    await client.close();
    await run.registration.close();
  });

  it('test_never_forwards_a_json_rpc_error_body_from_the_upstream_b5', async () => {
    const run = registerRun(broker, 'crash', await pin(upstreams, 'fx', ['crash', 'fail']), upstreams);
    const client = await connectClient(run.registration.url, run.registration.capability);
    const crashed = await client.callTool({ name: 'fx_crash', arguments: {} });
    expect(crashed.isError).toBe(true);
    expect(textOf(crashed)).toContain('[upstream_error]');
    expect(JSON.stringify(crashed)).not.toContain(FAIL_CANARY);
    expect(JSON.stringify(run.events)).not.toContain(FAIL_CANARY);
    // A tool-level error is the tool's own output: the model sees it.
    const failed = await client.callTool({ name: 'fx_fail', arguments: {} });
    expect(failed.isError).toBe(true);
    expect(textOf(failed)).toBe('the fixture failed on purpose');
    expect(finished(run.events).map((event) => event.errorCode)).toEqual(['upstream_error', 'upstream_error']);
    await client.close();
    await run.registration.close();
  });

  it('test_times_out_a_hanging_upstream_call_after_exactly_one_attempt_b6', async () => {
    // Long enough for the call to reach the upstream on a loaded machine; the upstream sleeps far longer.
    const broker = await Broker.start({ toolTimeoutMs: 1_000, hardLimitMs: 5_000 });
    onTestFinished(() => broker.close());
    const run = registerRun(broker, 'timeout', await pin(upstreams, 'fx', ['slow']), upstreams);
    const client = await connectClient(run.registration.url, run.registration.capability);
    const before = fixture.calls.get('slow') ?? 0;
    const result = await client.callTool({ name: 'fx_slow', arguments: { ms: 30_000 } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('[timed_out]');
    expect(textOf(result)).toContain('not retried');
    expect((fixture.calls.get('slow') ?? 0) - before).toBe(1);
    expect(finished(run.events)).toMatchObject([{ ok: false, errorCode: 'timed_out' }]);
    expect(run.registration.inFlight()).toBe(0);
    await client.close();
    await run.registration.close();
  });

  it('test_answers_timed_out_at_the_hard_limit_even_when_the_upstream_caller_ignores_the_abort_and_does_not_wait_for_it_on_close_b6_b7', async () => {
    const hardBroker = await Broker.start({ toolTimeoutMs: 50, hardLimitMs: 100 });
    try {
      let aborted = false;
      // An UpstreamCaller that never settles, as a wedged implementation would.
      const wedged = {
        callTool: (_route: unknown, _args: unknown, signal: AbortSignal) => {
          signal.addEventListener('abort', () => (aborted = true));
          return new Promise<never>(() => undefined);
        },
      };
      const tools = await pin(upstreams, 'fx', ['echo']);
      const run = registerRun(hardBroker, 'wedged', tools, { ...upstreams, callTool: wedged.callTool });
      const client = await connectClient(run.registration.url, run.registration.capability);
      const result = await client.callTool({ name: 'fx_echo', arguments: { text: 'x' } });
      expect(textOf(result)).toContain('[timed_out]');
      expect(aborted).toBe(true);
      expect(run.registration.inFlight()).toBe(0);
      await run.registration.close();
      await client.close().catch(() => undefined);
    } finally {
      await hardBroker.close();
    }
  });

  it('test_refuses_arguments_over_the_size_bound_without_reaching_the_upstream', async () => {
    const smallBroker = await Broker.start({ maxArgumentBytes: 1024 });
    try {
      const run = registerRun(smallBroker, 'big-args', await pin(upstreams, 'fx', ['echo']), upstreams);
      const client = await connectClient(run.registration.url, run.registration.capability);
      const before = fixture.calls.get('echo') ?? 0;
      const result = await client.callTool({ name: 'fx_echo', arguments: { text: 'y'.repeat(2048) } });
      expect(textOf(result)).toContain('Tool arguments exceed 1024 bytes.');
      expect(fixture.calls.get('echo') ?? 0).toBe(before);
      expect(run.events).toMatchObject([{ kind: 'call_refused', tool: 'fx_echo' }]);
      await client.close();
      await run.registration.close();
    } finally {
      await smallBroker.close();
    }
  });

  it('test_does_not_make_a_call_whose_start_could_not_be_recorded', async () => {
    const run = registerRun(broker, 'journal-down', await pin(upstreams, 'fx', ['echo']), upstreams, {
      onEvent: () => {
        throw new Error('disk full');
      },
    });
    const client = await connectClient(run.registration.url, run.registration.capability);
    const before = fixture.calls.get('echo') ?? 0;
    const result = await client.callTool({ name: 'fx_echo', arguments: { text: 'x' } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('[internal]');
    expect(textOf(result)).not.toContain('disk full');
    expect(fixture.calls.get('echo') ?? 0).toBe(before);
    await client.close();
    await run.registration.close();
  });

  it('test_refuses_a_call_beyond_the_concurrent_call_bound_instead_of_queueing_it', async () => {
    const narrow = await Broker.start({ maxConcurrentCalls: 1 });
    try {
      let started!: () => void;
      const firstStarted = new Promise<void>((resolve) => (started = resolve));
      const run = registerRun(narrow, 'narrow', await pin(upstreams, 'fx', ['slow', 'echo']), upstreams, {
        onEvent: (event) => {
          if (event.kind === 'tool_call_started') started();
        },
      });
      const client = await connectClient(run.registration.url, run.registration.capability);
      const first = client.callTool({ name: 'fx_slow', arguments: { ms: 200 } });
      await firstStarted;
      const second = await client.callTool({ name: 'fx_echo', arguments: { text: 'x' } });
      expect(textOf(second)).toContain('1 tool calls are already in flight');
      expect(textOf(await first)).toBe('slept');
      expect(textOf(await client.callTool({ name: 'fx_echo', arguments: { text: 'after' } }))).toBe('after');
      await client.close();
      await run.registration.close();
    } finally {
      await narrow.close();
    }
  });

  it('test_tells_upstream_401_apart_from_a_refused_connection_b6', async () => {
    const port = await freePort();
    const wrongCreds = await openUpstreams({
      authed: { type: 'http', url: authFixture.url, headers: { Authorization: 'Bearer wrong-token' } },
      gone: { type: 'http', url: `http://127.0.0.1:${port}/mcp` },
    });
    const [echo] = await pin(upstreams, 'authed', ['echo']);
    const goneRoute = { ...echo!, exposedName: 'gone_echo', upstream: 'gone' };
    const run = registerRun(broker, 'auth-vs-refused', [echo!, goneRoute], wrongCreds);
    const client = await connectClient(run.registration.url, run.registration.capability);
    const unauthorized = await client.callTool({ name: 'authed_echo', arguments: { text: 'x' } });
    const unreachable = await client.callTool({ name: 'gone_echo', arguments: { text: 'x' } });
    expect(textOf(unauthorized)).toContain('[unauthorized]');
    expect(textOf(unreachable)).toContain('[unreachable]');
    expect(finished(run.events).map((event) => event.errorCode)).toEqual(['unauthorized', 'unreachable']);
    expect(JSON.stringify(unauthorized)).not.toContain('must not be forwarded');
    await client.close();
    await run.registration.close();
    await wrongCreds.close();
  });

  it('test_refuses_a_tool_whose_upstream_schema_changed_since_pinning_until_re_pinned_b3', async () => {
    const changed = await startHttpFixture({ schemaVariant: 2 });
    const live = await openUpstreams({ fx: { type: 'http', url: changed.url } });
    const pinnedEarlier = await pin(upstreams, 'fx', ['echo']);
    const run = registerRun(broker, 'schema-changed', pinnedEarlier, live);
    const client = await connectClient(run.registration.url, run.registration.capability);
    const result = await client.callTool({ name: 'fx_echo', arguments: { text: 'x', loud: true } });
    expect(textOf(result)).toContain('re-pin the tool');
    expect(textOf(result)).toContain('[schema_changed]');
    expect(changed.calls.get('echo') ?? 0).toBe(0);
    await run.registration.close();
    const repinned = registerRun(broker, 'schema-repinned', await pin(live, 'fx', ['echo']), live);
    const client2 = await connectClient(repinned.registration.url, repinned.registration.capability);
    expect(textOf(await client2.callTool({ name: 'fx_echo', arguments: { text: 'ok', loud: true } }))).toBe('ok');
    await client.close().catch(() => undefined);
    await client2.close();
    await repinned.registration.close();
    await live.close();
    await changed.close();
  });

  it('test_close_removes_the_capability_at_once_and_resolves_only_after_the_in_flight_call_drained_b7', async () => {
    const slowBroker = await Broker.start();
    try {
      let started!: () => void;
      const callStarted = new Promise<void>((resolve) => (started = resolve));
      const order: string[] = [];
      const run = registerRun(slowBroker, 'drain', await pin(upstreams, 'fx', ['slow']), upstreams, {
        onEvent: (event) => {
          if (event.kind === 'tool_call_started') started();
          if (event.kind === 'tool_call_finished') order.push('call finished');
        },
      });
      const client = await connectClient(run.registration.url, run.registration.capability);
      const call = client.callTool({ name: 'fx_slow', arguments: { ms: 300 } });
      await callStarted;
      expect(run.registration.inFlight()).toBe(1);
      const closed = run.registration.close().then(() => order.push('close resolved'));
      // The capability is gone before the drain finishes: a new connection is refused now.
      await expect(connectClient(run.registration.url, run.registration.capability)).rejects.toThrow();
      expect(order).toEqual([]);
      await Promise.all([call, closed]);
      expect(order).toEqual(['call finished', 'close resolved']);
      // The drained call's answer still reaches the child.
      expect(textOf(await call)).toBe('slept');
      expect(run.registration.inFlight()).toBe(0);
      await client.close().catch(() => undefined);
    } finally {
      await slowBroker.close();
    }
  });

  it("test_reports_each_call_with_the_clis_tool_use_id_from_its_meta_also_when_two_calls_of_one_tool_finish_in_reverse_order", async () => {
    // A tools/call request as the pinned CLI sent it to the broker (captured from 2.1.328).
    const captured = JSON.parse(fs.readFileSync('test/broker/data/cli-2.1.328-tools-call.json', 'utf8')) as { params: { _meta: Record<string, unknown> } };
    expect(captured.params._meta['claudecode/toolUseId']).toBe('toolu_00000000000000000001');
    const run = registerRun(broker, 'tool-use-ids', await pin(upstreams, 'fx', ['slow']), upstreams);
    const client = await connectClient(run.registration.url, run.registration.capability);
    const call = (toolUseId: string, ms: number) => client.callTool({ name: 'fx_slow', arguments: { ms }, _meta: { ...captured.params._meta, 'claudecode/toolUseId': toolUseId } });
    await Promise.all([call('toolu_slow', 600), call('toolu_fast', 10)]);
    await client.callTool({ name: 'fx_slow', arguments: { ms: 1 } });
    expect(finished(run.events).map((event) => [event.toolUseId, event.durationMs >= 600])).toEqual([
      ['toolu_fast', false],
      ['toolu_slow', true],
      [null, false],
    ]);
    const started = run.events.filter((event) => event.kind === 'tool_call_started');
    expect(started.map((event) => event.toolUseId).sort()).toEqual([null, 'toolu_fast', 'toolu_slow'].sort());
    await client.close();
    await run.registration.close();
  });

  it('test_keeps_the_capability_and_upstream_credentials_out_of_every_event_c3', async () => {
    const run = registerRun(broker, 'canary', await pin(upstreams, 'authed', ['echo', 'fail']), upstreams);
    const client = await connectClient(run.registration.url, run.registration.capability);
    expect(textOf(await client.callTool({ name: 'authed_echo', arguments: { text: 'hi' } }))).toBe('hi');
    await client.callTool({ name: 'authed_fail', arguments: {} });
    await client.callTool({ name: 'authed_nope', arguments: {} });
    const serialized = JSON.stringify(run.events);
    expect(run.events.map((event) => event.kind)).toEqual(['tool_call_started', 'tool_call_finished', 'tool_call_started', 'tool_call_finished', 'call_refused']);
    expect(serialized).not.toContain(run.registration.capability);
    expect(serialized).not.toContain(UPSTREAM_CANARY);
    await client.close();
    await run.registration.close();
  });

  it('test_a_call_that_fails_for_any_other_reason_than_a_timeout_reaches_the_upstream_exactly_once_b6', async () => {
    // Issue 12 #16: a retry of a crashed, closed or refused call would pass every other test.
    const pidFile = path.join(tempDir('ward-b6-'), 'starts');
    const failing = await openUpstreams({
      authed: { type: 'http', url: authFixture.url, headers: { Authorization: 'Bearer wrong-token' } },
      dies: { type: 'stdio', command: process.execPath, args: [STDIO_SERVER, '--pid-file', pidFile] },
    });
    onTestFinished(() => failing.close());
    const [crash] = await pin(upstreams, 'fx', ['crash']);
    const [authedEcho] = await pin(upstreams, 'authed', ['echo']);
    const [exit] = await pin(failing, 'dies', ['exit']);
    const starts = () => fs.readFileSync(pidFile, 'utf8').trim().split('\n').length;
    expect(starts()).toBe(1);
    const run = registerRun(broker, 'once-only', [crash!, authedEcho!, exit!], { ...failing, callTool: (route, args, signal) => (route.upstream === 'fx' ? upstreams : failing).callTool(route, args, signal) });
    const client = await connectClient(run.registration.url, run.registration.capability);

    const crashesBefore = fixture.calls.get('crash') ?? 0;
    expect(textOf(await client.callTool({ name: crash!.exposedName, arguments: {} }))).toContain('[upstream_error]');
    expect((fixture.calls.get('crash') ?? 0) - crashesBefore).toBe(1);

    const requestsBefore = authFixture.stacks.length;
    expect(textOf(await client.callTool({ name: authedEcho!.exposedName, arguments: { text: 'x' } }))).toContain('[unauthorized]');
    expect(authFixture.stacks.length - requestsBefore).toBe(1);

    const closed = await client.callTool({ name: exit!.exposedName, arguments: {} });
    expect(closed.isError).toBe(true);
    // The server that closed the connection mid-call was not started again to repeat the call.
    expect(starts()).toBe(1);
    expect(finished(run.events)).toHaveLength(3);
    expect(finished(run.events).every((event) => !event.ok)).toBe(true);
    await client.close();
    await run.registration.close();
  });

  it('test_the_broker_itself_discards_a_result_over_1_mib_whatever_the_upstream_caller_lets_through_b5', async () => {
    // Issue 12 #18: the upstream client's own cap hid a broker without one.
    const [echo] = await pin(upstreams, 'fx', ['echo']);
    // A caller that lets an oversized result through, and understates its size.
    const oversized: Upstreams['callTool'] = async () => ({ ok: true, content: [{ type: 'text', text: 'y'.repeat(1024 * 1024 + 1) }], isError: false, bytes: 10 });
    const run = registerRun(broker, 'broker-cap', [echo!], { ...upstreams, callTool: oversized });
    const client = await connectClient(run.registration.url, run.registration.capability);
    const result = await client.callTool({ name: echo!.exposedName, arguments: { text: 'x' } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('[too_large]');
    expect(textOf(result)).not.toContain('yyyy');
    expect(finished(run.events)).toMatchObject([{ ok: false, errorCode: 'too_large' }]);
    await client.close();
    await run.registration.close();
  });

});
