/** What the gateway tests share: a plain HTTP call as the child makes it, and the scripted provider's answer text. */
import http from 'node:http';

export const MESSAGE = JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'hi' }] });

export interface Reply {
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders;
}

export function post(url: string, headers: Record<string, string>, body: string, method = 'POST'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method, headers: { 'content-type': 'application/json', ...headers } }, (response) => {
      let text = '';
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text, headers: response.headers }));
    });
    request.on('error', reject);
    request.end(body);
  });
}

/** The answer's text, joined from the SSE text deltas. */
export function streamedText(sse: string): string {
  return sse
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => JSON.parse(line.slice(5)) as { delta?: { text?: string } })
    .map((event) => event.delta?.text ?? '')
    .join('');
}
