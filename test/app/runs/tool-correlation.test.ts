import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Broker } from '../../../main/broker/broker.js';
import type { RunBinding, RunRegistration } from '../../../main/broker/types.js';
import type { PayloadOf } from '../../../common/events.js';
import { publishToolAgent } from './agents.js';
import { formatEvent } from '../../../main/cli/format-event.js';
import { connectClient } from '../../broker/helpers.js';
import { payloads, startHarness, types, type Harness } from './harness.js';
import { until } from '../../support/wait.js';

interface CliHop {
  /** Registers runs with the real broker, handing the CLI this hop's URL instead of the broker's. */
  register(binding: RunBinding): RunRegistration;
  /** The CLI's tool_use id of each tools/call, in the order the broker answered them. */
  readonly answered: string[];
  close(): Promise<void>;
}

/**
 * A loopback hop between the pinned CLI and the real broker (test infrastructure, like the
 * scripted model provider), doing two things:
 *  - it marks the tools read-only in tools/list, as an upstream's readOnlyHint would: the pinned
 *    CLI runs the MCP calls of one assistant message concurrently only for such tools (otherwise
 *    one after another);
 *  - it hands the CLI the answers to tools/call in the order the CLI asked, however the broker
 *    finished them. The broker reports a call finished before its answer reaches the CLI, so the
 *    two orders can always differ; here they differ every time.
 */
async function startCliHop(broker: Broker): Promise<CliHop> {
  const answered: string[] = [];
  let delivered = Promise.resolve();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const message = (body.length > 0 ? JSON.parse(body.toString('utf8')) : {}) as { method?: string; params?: { name?: string; _meta?: Record<string, unknown> } };
      const isCall = message.method === 'tools/call';
      // Answers are delivered in the order the calls arrived.
      let release!: () => void;
      const previous = delivered;
      if (isCall) delivered = new Promise((resolve) => (release = resolve));
      const upstream = http.request(
        { host: '127.0.0.1', port: broker.port, path: req.url, method: req.method, headers: { ...req.headers, host: `127.0.0.1:${broker.port}` } },
        (answer) => {
          if (!isCall && message.method !== 'tools/list') {
            res.writeHead(answer.statusCode!, answer.headers);
            answer.pipe(res);
            return;
          }
          const parts: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => parts.push(chunk));
          answer.on('end', () => {
            let text = Buffer.concat(parts).toString('utf8');
            const headers = { ...answer.headers };
            if (message.method === 'tools/list') {
              const list = JSON.parse(text) as { result: { tools: { annotations?: object }[] } };
              for (const tool of list.result.tools) tool.annotations = { readOnlyHint: true };
              text = JSON.stringify(list);
              headers['content-length'] = String(Buffer.byteLength(text));
              res.writeHead(answer.statusCode!, headers).end(text);
              return;
            }
            answered.push(String(message.params?._meta?.['claudecode/toolUseId']));
            void previous.then(() => {
              res.writeHead(answer.statusCode!, headers).end(text);
              // A moment for the CLI to take this answer in before the next one arrives.
              setTimeout(release, 200);
            });
          });
        },
      );
      upstream.on('error', () => res.destroy());
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    answered,
    register(binding) {
      const registration = broker.register(binding);
      const { pathname } = new URL(registration.url);
      return { capability: registration.capability, url: `http://127.0.0.1:${port}${pathname}`, close: () => registration.close(), inFlight: () => registration.inFlight(), cancelCalls: () => registration.cancelCalls() };
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let harness: Harness | undefined;
let broker: Broker | undefined;
let hop: CliHop | undefined;
afterEach(async () => {
  await harness?.close();
  await hop?.close();
  await broker?.close();
  harness = hop = broker = undefined;
});

describe("tool results are joined to the broker's outcome by the CLI's tool_use id", () => {
  it('test_two_calls_of_one_tool_in_one_assistant_message_answered_by_the_upstream_in_reverse_order_each_tool_result_carries_its_own_outcome', async () => {
    broker = await Broker.start();
    hop = await startCliHop(broker);
    harness = await startHarness(
      [
        {
          blocks: [
            { type: 'tool_use', name: 'mcp__ward__fixture__slow', input: { ms: 2_000 } },
            { type: 'tool_use', name: 'mcp__ward__fixture__slow', input: { ms: 50 } },
          ],
        },
        { blocks: [{ type: 'text', text: 'Both slept.' }] },
      ],
      { broker: hop },
    );
    await publishToolAgent(harness);
    const handle = harness.service.startTurn({ namespace: harness.ns, agent: 'tooly', prompt: 'Sleep twice' });
    expect((await handle.done).state).toBe('succeeded');

    const events = harness.events(handle.conversationId);
    const [long, short] = payloads<PayloadOf<'tool_call'>>(events, 'tool_call').map((call) => call.toolUseId);
    // The CLI named each call's tool_use in its tools/call, and the upstream finished the short one first.
    expect(hop.answered).toEqual([short, long]);
    const results = new Map(payloads<PayloadOf<'tool_result'>>(events, 'tool_result').map((result) => [result.toolUseId, result]));
    expect(results.get(long!)).toMatchObject({ tool: 'fixture__slow', ok: true, bytes: 5, errorCode: null, preview: 'slept' });
    expect(results.get(short!)).toMatchObject({ tool: 'fixture__slow', ok: true, bytes: 5, errorCode: null, preview: 'slept' });
    // The durations are the broker's: the long call slept 2 s, the short one far less.
    expect(results.get(long!)!.durationMs).toBeGreaterThanOrEqual(2_000);
    expect(results.get(short!)!.durationMs).toBeLessThan(results.get(long!)!.durationMs);
    // Every broker outcome was claimed by its own tool_result.
    expect(types(events)).not.toContain('tool_drained');
  });

  it('test_a_call_made_with_the_runs_capability_by_something_other_than_the_cli_is_journaled_as_such_not_as_after_a_stop', async () => {
    // Issue 12 #14: such a call was journaled "finished after the stop" though nobody stopped anything.
    const h = await startHarness([]);
    harness = h;
    const agent = await publishToolAgent(h);
    h.provider.push({ blocks: [{ type: 'tool_use', name: 'mcp__ward__fixture__slow', input: { ms: 3_000 } }] }, { blocks: [{ type: 'text', text: 'done' }] });
    const handle = h.service.startTurn({ namespace: h.ns, agent: agent.version.agentName, prompt: 'slow' });
    await until(() => types(h.events(handle.conversationId)).includes('tool_call'), 'the CLI calling slow');
    const [runDir] = fs.readdirSync(h.tmpRoot).map((name) => path.join(h.tmpRoot, name));
    const ward = (JSON.parse(fs.readFileSync(path.join(runDir!, 'mcp.json'), 'utf8')) as { mcpServers: { ward: { url: string; headers: { Authorization: string } } } }).mcpServers.ward;
    const side = await connectClient(ward.url, ward.headers.Authorization.replace('Bearer ', ''));
    await side.callTool({ name: 'fixture__echo', arguments: { text: 'side door' } });
    await side.close();
    expect(await handle.done).toMatchObject({ state: 'succeeded' });

    const events = h.events(handle.conversationId);
    expect(payloads(events, 'tool_drained')).toEqual([expect.objectContaining({ tool: 'fixture__echo', ok: true, cause: 'not_asked_by_the_cli' })]);
    const lines = events.map((event) => formatEvent(event)).join('\n');
    expect(lines).toContain("echo was called with the run's capability by something other than the CLI");
    expect(lines).not.toMatch(/after the (stop|CLI stopped)/);
  });
});
