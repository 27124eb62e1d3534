/**
 * The redirect target of a sign-in: an HTTP server on 127.0.0.1 at a random port that accepts
 * exactly one valid callback (matching `state`), answers anything else with an error page, and
 * gives up after a bounded wait (C5).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { timingSafeEqual, createHash } from 'node:crypto';
import { WardError } from '../base/errors.js';
import { REDIRECT_PATH } from './oauth.js';

export interface LoopbackCallback {
  readonly redirectUrl: string;
  /** Resolves with the authorization code of the one valid callback. */
  readonly code: Promise<string>;
  close(): Promise<void>;
}

function page(res: ServerResponse, status: number, text: string): void {
  const body = `<!doctype html><meta charset="utf-8"><title>Ward</title><p>${text}</p>`;
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'content-security-policy': "default-src 'none'",
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
  });
  res.end(body);
}

function sameState(a: string, b: string): boolean {
  const left = createHash('sha256').update(a).digest();
  const right = createHash('sha256').update(b).digest();
  return timingSafeEqual(left, right);
}

export async function startLoopbackCallback(options: { state: string; timeoutMs: number }): Promise<LoopbackCallback> {
  let settle!: { resolve: (code: string) => void; reject: (error: Error) => void };
  const code = new Promise<string>((resolve, reject) => (settle = { resolve, reject }));
  code.catch(() => undefined);
  let done = false;
  const finish = (outcome: { code: string } | { error: WardError }): void => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    if ('code' in outcome) settle.resolve(outcome.code);
    else settle.reject(outcome.error);
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method !== 'GET' || url.pathname !== REDIRECT_PATH) return page(res, 404, 'Not found.');
    if (done) return page(res, 410, 'This sign-in is already finished. You can close this window.');
    const state = url.searchParams.get('state');
    // A callback without our state is someone else's (or forged): ignored, the wait goes on.
    if (state === null || !sameState(state, options.state)) return page(res, 400, 'This sign-in link does not belong to the sign-in in progress.');
    const error = url.searchParams.get('error');
    if (error !== null) {
      page(res, 400, 'Sign-in was not completed. You can close this window and try again from Ward.');
      return finish({ error: new WardError('signin_rejected', `the authorization server refused the sign-in (${error.replace(/[^A-Za-z0-9_.-]/g, '').slice(0, 64)})`) });
    }
    const received = url.searchParams.get('code');
    if (received === null || received === '' || received.length > 4096) return page(res, 400, 'The callback carries no authorization code.');
    page(res, 200, 'Signed in. You can close this window and return to Ward.');
    finish({ code: received });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const timer = setTimeout(
    () => finish({ error: new WardError('signin_timeout', `no sign-in callback arrived within ${Math.round(options.timeoutMs / 1000)} s; try again`) }),
    options.timeoutMs,
  );
  const port = (server.address() as AddressInfo).port;
  return {
    redirectUrl: `http://127.0.0.1:${port}${REDIRECT_PATH}`,
    code,
    close: () =>
      new Promise<void>((resolve) => {
        finish({ error: new WardError('signin_timeout', 'the sign-in was cancelled') });
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
