/**
 * What every loopback endpoint Ward offers its child (the tool broker, the model gateway) checks
 * before anything else (B1, G1): a loopback peer, a loopback Host name for this port, no browser
 * page (an Origin header), and a per-run capability compared in constant time.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const LOOPBACK_PEERS = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

/** 32 random bytes, base64url: a run's capability (B1, G1). */
export function newCapability(): string {
  return randomBytes(32).toString('base64url');
}

export function capabilityHash(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** Hashing both sides gives equal lengths, so the comparison takes the same time whatever was presented. */
export function capabilityMatches(presented: string | undefined, expectedHash: Buffer): boolean {
  return presented !== undefined && timingSafeEqual(capabilityHash(presented), expectedHash);
}

export interface LoopbackServer {
  readonly http: Server;
  readonly port: number;
  /** Why a request is refused before it is read, or null. */
  refusal(req: IncomingMessage): string | null;
  close(): Promise<void>;
}

/** Listens on 127.0.0.1 at a random port. */
export async function startLoopbackServer(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<LoopbackServer> {
  const http = createServer(handle);
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(0, '127.0.0.1', () => {
      http.off('error', reject);
      resolve();
    });
  });
  const port = (http.address() as AddressInfo).port;
  const hosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]);
  return {
    http,
    port,
    refusal(req) {
      if (!LOOPBACK_PEERS.has(req.socket.remoteAddress ?? '')) return 'only loopback peers are served';
      if (!hosts.has((req.headers.host ?? '').toLowerCase())) return 'Host must be a loopback name';
      if (req.headers.origin !== undefined) return 'requests with an Origin header are refused';
      return null;
    },
    close: () =>
      new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      }),
  };
}
