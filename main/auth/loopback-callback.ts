/**
 * Ward's one loopback redirect target, for OIDC sign-in (sign-in.ts) and for MCP OAuth (a
 * connection's login, main/connections/manager.ts) alike.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WardError } from '../base/errors.js';
import { sameSecret } from '../credentials/secret-store.js';

export const CALLBACK_PATH = '/callback';
export const SIGNIN_TIMEOUT_MS = 5 * 60_000;
const MAX_URL_LENGTH = 8 * 1024;

/** The TCP peer itself (never a forwarding header) must be this machine's loopback. */
export function isLoopbackPeer(address: string | undefined): boolean {
  return address === '127.0.0.1' || address === '::1' || address === '::ffff:127.0.0.1';
}

export interface CallbackServerOptions {
  readonly expectedState: string;
  readonly timeoutMs?: number;
  /** Seam for the peer check; tests pass a stricter one to see a refusal on a one-address machine. */
  readonly isAllowedPeer?: (address: string | undefined) => boolean;
  /** Checks a callback whose state matched before it is accepted (MCP OAuth: the issuer); throws the WardError that fails the sign-in. */
  readonly check?: (callback: URL) => void;
}

export interface CallbackServer {
  /** `http://127.0.0.1:<port>/callback` */
  readonly redirectUri: string;
  /** The one accepted callback URL; rejects on a wrong state, a provider error or the deadline. */
  readonly result: Promise<URL>;
  close(): Promise<void>;
}

function reply(res: http.ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', 'referrer-policy': 'no-referrer', connection: 'close' });
  res.end(`${text}\n`);
}

/**
 * A one-shot loopback redirect target (C5). It binds 127.0.0.1 on a random port, answers only
 * GET /callback from a loopback peer with a loopback Host, and accepts exactly one callback
 * whose `state` matches. A callback with a wrong `state` fails the sign-in at once (it means a
 * stale tab or a forged request; the person starts again), a second callback is refused
 * (409), and after the first settled callback the server closes. Waiting is bounded.
 */
export async function startCallbackServer(options: CallbackServerOptions): Promise<CallbackServer> {
  const allowed = options.isAllowedPeer ?? isLoopbackPeer;
  const timeoutMs = options.timeoutMs ?? SIGNIN_TIMEOUT_MS;
  let settled = false;
  let resolveResult!: (url: URL) => void;
  let rejectResult!: (error: WardError) => void;
  const result = new Promise<URL>((resolve, reject) => {
    resolveResult = resolve;
    rejectResult = reject;
  });
  // The caller may not be awaiting yet when a failure lands; it still sees it through `result`.
  result.catch(() => undefined);

  const server = http.createServer();
  const close = () => closeGracefully(server);
  const settle = (outcome: { url: URL } | { error: WardError }) => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    if ('url' in outcome) resolveResult(outcome.url);
    else rejectResult(outcome.error);
    setImmediate(() => void close());
  };

  server.on('request', (req, res) => {
    if (!allowed(req.socket.remoteAddress)) return reply(res, 403, 'Refused: the sign-in callback accepts requests from this computer only.');
    if (req.headers.host !== `127.0.0.1:${port}`) return reply(res, 400, 'Refused: unexpected Host.');
    if ((req.url ?? '').length > MAX_URL_LENGTH) return reply(res, 414, 'Refused: the callback URL is too long.');
    const url = new URL(req.url ?? '/', `http://127.0.0.1:${port}`);
    if (req.method !== 'GET' || url.pathname !== CALLBACK_PATH) return reply(res, 404, 'Not found.');
    if (settled) return reply(res, 409, 'Refused: this sign-in already received its callback. Start a new sign-in from Ward.');
    const state = url.searchParams.get('state');
    if (state === null || !sameSecret(state, options.expectedState)) {
      reply(res, 400, 'Sign-in failed: the response does not belong to this sign-in (state mismatch). Start a new sign-in from Ward.');
      return settle({ error: new WardError('signin_state_mismatch', 'the sign-in callback carried a state that does not match this sign-in (a stale browser tab or a forged request); start the sign-in again') });
    }
    try {
      options.check?.(url);
    } catch (error) {
      reply(res, 400, 'Sign-in failed: the response did not come from the authorization server this sign-in went to. Return to Ward.');
      return settle({ error: error instanceof WardError ? error : new WardError('signin_rejected', 'the sign-in callback was refused', { cause: error }) });
    }
    const providerError = url.searchParams.get('error');
    if (providerError !== null) {
      const shown = /^[\x20-\x7e]{1,64}$/.test(providerError) ? providerError : 'error';
      reply(res, 200, `Sign-in failed at the authorization server (${shown}). You can close this tab.`);
      // openid-client turns the error parameters into its own error, so the exchange step reports it.
      return settle({ url });
    }
    if (!url.searchParams.get('code')) {
      reply(res, 400, 'Sign-in failed: the callback carries no authorization code.');
      return settle({ error: new WardError('signin_rejected', 'the sign-in callback carried no authorization code') });
    }
    reply(res, 200, 'Signed in. You can close this tab and return to Ward.');
    settle({ url });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const timer = setTimeout(
    () => settle({ error: new WardError('signin_timeout', `no sign-in came back within ${Math.round(timeoutMs / 1000)} s; run the sign-in again`) }),
    timeoutMs,
  );
  return {
    redirectUri: `http://127.0.0.1:${port}${CALLBACK_PATH}`,
    result,
    close: async () => {
      if (!settled) settle({ error: new WardError('signin_timeout', 'the sign-in was cancelled') });
      await close();
    },
  };
}

/** Lets the last answer flush (it says `connection: close`), then cuts whatever still lingers. */
function closeGracefully(server: http.Server): Promise<void> {
  return new Promise<void>((resolve) => {
    const force = setTimeout(() => server.closeAllConnections(), 1_000);
    server.close(() => {
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}
