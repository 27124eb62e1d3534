/**
 * The provider's answer on its way back to the child: streamed as it arrives, token usage read on
 * the way (G4), and every credential the gateway sent for the call removed from the headers and
 * the body (C3) — a provider whose error echoes the key must not put it in the sandbox or the
 * CLI's transcript. A compressed answer is decoded first, or the key could pass inside it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { describeError } from '../base/errors.js';
import { traceMark } from '../base/trace.js';
import { StreamRedactor, redactSecrets } from '../base/secret-redaction.js';
import { UsageReader, type TokenUsage } from './usage.js';

/** Hop-by-hop headers, cookies, and what redaction or decoding makes untrue: never passed on. */
const DROPPED_RESPONSE = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'set-cookie', 'content-length', 'content-encoding']);

const DECODERS: Readonly<Record<string, () => NodeJS.ReadWriteStream>> = {
  gzip: () => zlib.createGunzip(),
  'x-gzip': () => zlib.createGunzip(),
  deflate: () => zlib.createInflate(),
  br: () => zlib.createBrotliDecompress(),
};

export type RelayDone = (problem: string | null, usage: TokenUsage | null) => void;

/** The answer's body, decoded; null for an encoding Ward cannot read (and so cannot redact). */
export function decodedBody(upstream: IncomingMessage): Readable | null {
  const encoding = String(upstream.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (encoding === 'identity' || encoding === '') return upstream;
  const decoder = DECODERS[encoding];
  if (decoder === undefined) return null;
  const decoded = upstream.pipe(decoder()) as unknown as Readable;
  upstream.once('error', (error) => decoded.destroy(error));
  return decoded;
}

export function redactedHeaders(upstream: IncomingMessage, secrets: readonly string[]): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(upstream.headers)) {
    if (value === undefined || DROPPED_RESPONSE.has(name)) continue;
    headers[name] = Array.isArray(value) ? value.map((item) => redactSecrets(item, secrets)) : redactSecrets(value, secrets);
  }
  return headers;
}

/** Streams `body` (the provider's decoded answer) to the child with `secrets` removed. */
export function relayRedacted(upstream: IncomingMessage, body: Readable, res: ServerResponse, secrets: readonly string[], done: RelayDone): Promise<void> {
  res.writeHead(upstream.statusCode ?? 502, redactedHeaders(upstream, secrets));
  res.flushHeaders();
  const usage = new UsageReader(String(upstream.headers['content-type'] ?? ''));
  const redactor = new StreamRedactor(secrets);
  return new Promise((resolve) => {
    let finished = false;
    let traced = false;
    const finish = (problem: string | null) => {
      if (finished) return;
      finished = true;
      done(problem === null ? null : redactSecrets(problem, secrets), usage.total());
      resolve();
    };
    body.on('data', (chunk: Buffer) => {
      if (!traced) traceMark('gateway-first-chunk');
      traced = true;
      usage.push(chunk);
      if (!res.write(redactor.push(chunk))) {
        body.pause();
        res.once('drain', () => body.resume());
      }
    });
    body.once('end', () => {
      res.end(redactor.end());
      finish(null);
    });
    body.once('error', (error) => {
      res.destroy();
      finish(`broke off its answer (${describeError(error)})`);
    });
    res.once('close', () => {
      if (!res.writableFinished) upstream.destroy();
      finish(res.writableFinished ? null : 'was cut off: the CLI closed the connection before the answer ended');
    });
  });
}
