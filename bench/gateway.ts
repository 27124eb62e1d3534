/**
 * Model gateway overhead (G2 target: added time to first token p50 ≤2 ms): a client reading a
 * 200-event streamed answer from a Messages-API server on loopback directly, against the same
 * client reading it through the gateway (capability check, credential swap, byte-for-byte relay,
 * usage read on the way). Requests alternate so both see the same load.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ModelGateway } from '../main/gateway/gateway.js';
import { percentile, round } from './stats.js';

const WARMUP = 50;
const REQUESTS = 300;
const EVENTS = 200;
const TARGET_ADDED_TTFT_P50_MS = 2;

/** A provider that answers every call with the same 200-event stream, at once. */
function streamedAnswer(): string {
  const events = [`event: message_start\ndata: ${JSON.stringify({ type: 'message_start', message: { id: 'msg_bench', type: 'message', role: 'assistant', content: [], usage: { input_tokens: 10, output_tokens: 0 } } })}\n\n`];
  for (let i = 0; i < EVENTS - 2; i++) events.push(`event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: `word${i} ` } })}\n\n`);
  events.push(`event: message_delta\ndata: ${JSON.stringify({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: EVENTS } })}\n\n`);
  return events.join('');
}

async function provider(): Promise<{ url: string; close(): Promise<void> }> {
  const body = streamedAnswer();
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

const agent = new http.Agent({ keepAlive: true });

/** Time to the first body byte and to the end of the answer, in ms. */
function timedRequest(url: string, key: string): Promise<{ firstByteMs: number; totalMs: number }> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    let first: bigint | undefined;
    const request = http.request(url, { method: 'POST', agent, headers: { 'x-api-key': key, 'content-type': 'application/json' } }, (response) => {
      response.on('data', () => (first ??= process.hrtime.bigint()));
      response.on('end', () => {
        const end = process.hrtime.bigint();
        resolve({ firstByteMs: Number((first ?? end) - start) / 1e6, totalMs: Number(end - start) / 1e6 });
      });
    });
    request.on('error', reject);
    request.end(JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'hi' }] }));
  });
}

export async function benchGateway(): Promise<Record<string, unknown>> {
  const upstream = await provider();
  const gateway = await ModelGateway.start();
  try {
    const route = gateway.register({ runId: 'bench', baseUrl: upstream.url, credential: async () => ({ kind: 'api-key', value: 'bench-key' }), onExchange: () => undefined });
    const direct = `${upstream.url}/v1/messages`;
    const viaGateway = `${route.url}/v1/messages`;
    for (let i = 0; i < WARMUP; i++) {
      await timedRequest(direct, 'bench-key');
      await timedRequest(viaGateway, route.capability);
    }
    const baseline = { first: [] as number[], total: [] as number[] };
    const through = { first: [] as number[], total: [] as number[] };
    for (let i = 0; i < REQUESTS; i++) {
      const a = await timedRequest(direct, 'bench-key');
      const b = await timedRequest(viaGateway, route.capability);
      baseline.first.push(a.firstByteMs);
      baseline.total.push(a.totalMs);
      through.first.push(b.firstByteMs);
      through.total.push(b.totalMs);
    }
    const addedFirst = percentile(through.first, 50) - percentile(baseline.first, 50);
    return {
      requests: REQUESTS,
      eventsPerAnswer: EVENTS,
      baselineFirstByteP50Ms: round(percentile(baseline.first, 50)),
      gatewayFirstByteP50Ms: round(percentile(through.first, 50)),
      addedFirstByteP50Ms: round(addedFirst),
      baselineTotalP50Ms: round(percentile(baseline.total, 50)),
      gatewayTotalP50Ms: round(percentile(through.total, 50)),
      addedTotalP50Ms: round(percentile(through.total, 50) - percentile(baseline.total, 50)),
      targetAddedFirstByteP50Ms: TARGET_ADDED_TTFT_P50_MS,
      pass: addedFirst <= TARGET_ADDED_TTFT_P50_MS,
    };
  } finally {
    await gateway.close();
    await upstream.close();
    agent.destroy();
  }
}
