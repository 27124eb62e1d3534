/**
 * Watches the SSE streams a Streamable HTTP server answers requests on, so that a call whose
 * answer can no longer come fails at once instead of waiting out the call bound (15 min). The
 * MCP SDK resumes an answer stream only when it saw an event id (a GET with
 * Last-Event-ID, never a re-sent request); a stream that ends without the answer and without an
 * id, or whose resumption is refused or keeps failing, it drops without a word. Here the same
 * bytes the SDK reads are scanned by the SDK's rules (eventsource-parser's: an event counts once
 * a blank line ends it and it has a data line; its id is its own) and such a request is reported
 * lost. Nothing is ever re-sent (B6).
 */
import type { FetchLike, RequestId } from '@modelcontextprotocol/client';
import { UpstreamError } from './upstream-error.js';

/** A request whose answer is expected on a stream. */
interface Awaited {
  readonly id: RequestId;
  readonly method: string;
}

/** Answer streams that ended with an event id stay resumable this long in number; the oldest is forgotten first. */
const MAX_RESUMABLE = 64;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The request a POST body carries, when it is one JSON-RPC request (the SDK's client never batches). */
function awaitedOf(body: unknown): Awaited | undefined {
  if (typeof body !== 'string') return undefined;
  let message: unknown;
  try {
    message = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (!isRecord(message) || typeof message.method !== 'string') return undefined;
  const id = message.id;
  return typeof id === 'string' || typeof id === 'number' ? { id, method: message.method.slice(0, 64) } : undefined;
}

/** The answer to `id` as the SDK's client would take it: a JSON-RPC result or error response. */
function answers(data: string, id: RequestId): boolean {
  let message: unknown;
  try {
    message = JSON.parse(data);
  } catch {
    return false;
  }
  if (!isRecord(message) || message.jsonrpc !== '2.0' || message.id !== id || 'method' in message) return false;
  const error = message.error;
  return isRecord(message.result) || (isRecord(error) && Number.isInteger(error.code) && typeof error.message === 'string');
}

/**
 * Reads one answer stream's events as they pass: whether the answer came, and the last event id.
 * It holds one event at most, which the capped fetch beneath it bounds (maxMessageBytes).
 */
export class SseAnswerScan {
  answered = false;
  lastEventId: string | undefined;
  private readonly decoder = new TextDecoder();
  /** The line still open, in pieces (a long data line is joined once, when it ends). */
  private open: string[] = [];
  private afterCR = false;
  private id: string | undefined;
  private type: string | undefined;
  private data = '';
  private dataLines = 0;

  constructor(private readonly requestId: RequestId) {}

  feed(bytes: Uint8Array): void {
    const text = this.decoder.decode(bytes, { stream: true });
    if (text === '') return;
    let start = 0;
    // The LF of a CRLF split across chunks ends no second line.
    if (this.afterCR && text.startsWith('\n')) start = 1;
    this.afterCR = false;
    while (start < text.length) {
      const cr = text.indexOf('\r', start);
      const lf = text.indexOf('\n', start);
      const end = cr === -1 ? lf : lf === -1 ? cr : Math.min(cr, lf);
      if (end === -1) break;
      this.open.push(text.slice(start, end));
      this.line(this.open.join(''));
      this.open = [];
      start = end + 1;
      if (text[end] === '\r') {
        if (start === text.length) this.afterCR = true;
        else if (text[start] === '\n') start++;
      }
    }
    if (start < text.length) this.open.push(text.slice(start));
  }

  private line(line: string): void {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(line[colon + 1] === ' ' ? colon + 2 : colon + 1);
    if (field === 'data') {
      this.data = this.dataLines === 0 ? value : `${this.data}\n${value}`;
      this.dataLines++;
    } else if (field === 'event') {
      this.type = value === '' ? undefined : value;
    } else if (field === 'id' && !value.includes('\0')) {
      this.id = value;
    }
  }

  private dispatch(): void {
    if (this.dataLines > 0) {
      if (this.id !== undefined && this.id !== '') this.lastEventId = this.id;
      if (!this.answered && this.data !== '' && (this.type === undefined || this.type === 'message')) this.answered = answers(this.data, this.requestId);
    }
    this.id = undefined;
    this.type = undefined;
    this.data = '';
    this.dataLines = 0;
  }
}

export class AnswerStreams {
  /** Streams that ended with an event id, by that id: a GET with it as Last-Event-ID may still bring the answer. */
  private readonly resumable = new Map<string, { readonly awaited: Awaited; failures: number }>();

  constructor(
    /** How many failed resumptions the SDK makes before it gives up (its reconnection `maxRetries`). */
    private readonly maxResumeFailures: number,
    /** Told once about a request whose answer will not come. */
    private readonly lost: (id: RequestId, failure: UpstreamError) => void,
  ) {}

  watch(fetch: FetchLike): FetchLike {
    return async (url, init) => {
      const method = (init?.method ?? 'GET').toUpperCase();
      if (method === 'POST') {
        const awaited = awaitedOf(init?.body);
        if (awaited === undefined) return fetch(url, init);
        const response = await fetch(url, init);
        // Any other answer (JSON, an HTTP error) the SDK settles the request from itself.
        const eventStream = response.headers.get('content-type')?.split(';', 1)[0]?.trim().toLowerCase() === 'text/event-stream';
        return response.ok && eventStream ? this.watched(response, awaited) : response;
      }
      const lastEventId = method === 'GET' ? new Headers(init?.headers).get('last-event-id') : null;
      const entry = lastEventId === null ? undefined : this.resumable.get(lastEventId);
      if (lastEventId === null || entry === undefined) return fetch(url, init);
      let response: Response;
      try {
        response = await fetch(url, init);
      } catch (error) {
        this.resumeFailed(lastEventId, undefined);
        throw error;
      }
      if (!response.ok) {
        this.resumeFailed(lastEventId, response.status);
        return response;
      }
      this.resumable.delete(lastEventId);
      return this.watched(response, entry.awaited);
    };
  }

  private resumeFailed(lastEventId: string, status: number | undefined): void {
    const entry = this.resumable.get(lastEventId);
    if (entry === undefined) return;
    entry.failures++;
    // The SDK takes a 405 as "no stream offered here" and stops; any other failure it retries, up to its bound.
    if (status !== 405 && entry.failures < this.maxResumeFailures) return;
    this.resumable.delete(lastEventId);
    const why = status === 405 ? 'the server does not offer resuming it (HTTP 405)' : `resuming it failed ${entry.failures} times`;
    this.lost(entry.awaited.id, new UpstreamError('answer_lost', `the server ended its answer stream for ${entry.awaited.method} without a result and ${why}`));
  }

  private ended(scan: SseAnswerScan, awaited: Awaited): void {
    if (scan.answered) return;
    if (scan.lastEventId === undefined) {
      this.lost(awaited.id, new UpstreamError('answer_lost', `the server ended its answer stream for ${awaited.method} without a result and it cannot be resumed (no event id)`));
      return;
    }
    this.resumable.delete(scan.lastEventId);
    this.resumable.set(scan.lastEventId, { awaited, failures: 0 });
    if (this.resumable.size > MAX_RESUMABLE) this.resumable.delete(this.resumable.keys().next().value!);
  }

  /** The same response, its body scanned as the SDK reads it; told when it ends, by its end or an error. */
  private watched(response: Response, awaited: Awaited): Response {
    const source = response.body;
    const scan = new SseAnswerScan(awaited.id);
    if (source === null) {
      this.ended(scan, awaited);
      return response;
    }
    const reader = source.getReader();
    const body = new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        let next: ReadableStreamReadResult<Uint8Array>;
        try {
          next = await reader.read();
        } catch (error) {
          this.ended(scan, awaited);
          controller.error(error);
          return;
        }
        if (next.done) {
          this.ended(scan, awaited);
          controller.close();
          return;
        }
        scan.feed(next.value);
        controller.enqueue(next.value);
      },
      cancel: (reason) => reader.cancel(reason),
    });
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  }
}
