/**
 * A minimal Messages-API endpoint on loopback for `ward doctor --self-test`: every streaming
 * call gets one fixed text answer, side calls a small JSON answer. No network, no cost.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBoundedBody } from '../base/http-body.js';

export const SELF_TEST_ANSWER = 'Ward self-test: the pinned CLI works.';
const MAX_BODY_BYTES = 8 * 1024 * 1024;

export interface OfflineProvider {
  readonly url: string;
  /** Number of streaming /v1/messages calls answered. */
  streamingCalls(): number;
  close(): Promise<void>;
}

export async function startOfflineProvider(): Promise<OfflineProvider> {
  let streaming = 0;
  const server = http.createServer((req, res) => {
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    const answer = (raw: Buffer | null): void => {
      if (raw === null) return json(413, { type: 'error', error: { type: 'request_too_large', message: 'request too large' } });
      const path = (req.url ?? '').split('?')[0];
      let body: { stream?: boolean; model?: string } = {};
      try {
        body = JSON.parse(raw.toString('utf8')) as typeof body;
      } catch {
        // answered below as a bad request
      }
      if (req.method !== 'POST') return json(404, { type: 'error', error: { type: 'not_found_error', message: 'not found' } });
      if (path === '/v1/messages/count_tokens') return json(200, { input_tokens: 1 });
      if (path !== '/v1/messages') return json(404, { type: 'error', error: { type: 'not_found_error', message: 'not found' } });
      const message = { id: 'msg_ward_self_test', type: 'message', role: 'assistant', model: body.model ?? 'unknown', stop_sequence: null };
      if (body.stream !== true) {
        return json(200, { ...message, content: [{ type: 'text', text: SELF_TEST_ANSWER }], stop_reason: 'end_turn', usage: { input_tokens: 1, output_tokens: 1 } });
      }
      streaming += 1;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const send = (type: string, data: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
      send('message_start', { message: { ...message, content: [], stop_reason: null, usage: { input_tokens: 1, output_tokens: 1 } } });
      send('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
      send('content_block_delta', { index: 0, delta: { type: 'text_delta', text: SELF_TEST_ANSWER } });
      send('content_block_stop', { index: 0 });
      send('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 1 } });
      send('message_stop', {});
      res.end();
    };
    readBoundedBody(req, MAX_BODY_BYTES).then(answer, () => res.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    streamingCalls: () => streaming,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
