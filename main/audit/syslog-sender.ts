/**
 * One batch to a syslog receiver over TLS (RFC 5425) or, to this machine only, plain TCP.
 * Syslog has no application-level acknowledgement: the only sign the receiver read everything is
 * that it closed its side after our end of stream, cleanly (TLS close, then TCP close). So a batch
 * counts as taken only then; anything else (reset, early close, timeout, a certificate that does
 * not verify) fails it and the same events are sent again later. A receiver that reads the batch
 * and then loses it (killed before writing it out) cannot be detected here: at-least-once holds
 * up to what the receiver keeps once it has read (rsyslog: a Direct main queue, omfile).
 */
import net from 'node:net';
import tls from 'node:tls';
import { trustedContext } from './trust.js';

export interface SyslogTarget {
  readonly host: string;
  readonly port: number;
  readonly tls: boolean;
  /** Certificates trusted besides Node's roots (the policy's caFile, PEM). */
  readonly extraCa?: string;
}

/** Every wait of one batch is bounded: a receiver that accepts and never answers costs at most their sum. */
export interface SendLimits {
  readonly connectMs: number;
  readonly writeMs: number;
  readonly closeMs: number;
}

export const DEFAULT_SEND_LIMITS: SendLimits = { connectMs: 10_000, writeMs: 30_000, closeMs: 10_000 };

function connect(target: SyslogTarget, onReady: () => void): net.Socket {
  if (!target.tls) return net.connect({ host: target.host, port: target.port }, onReady);
  const host = target.host.replace(/^\[(.*)\]$/, '$1');
  return tls.connect(
    {
      host,
      port: target.port,
      // SNI takes names only; an address is verified against the certificate's IP entries.
      ...(net.isIP(host) === 0 ? { servername: host } : {}),
      secureContext: trustedContext(target.extraCa),
      // Verification is Node's default and never turned off here.
      rejectUnauthorized: true,
      minVersion: 'TLSv1.2',
    },
    onReady,
  );
}

/** Sends `data` (framed messages) and resolves once the receiver closed cleanly after reading it all. */
export function sendBatch(target: SyslogTarget, data: Buffer, limits: SendLimits = DEFAULT_SEND_LIMITS, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(new Error('the audit delivery stopped'));
      return;
    }
    let phase: 'connect' | 'write' | 'close' = 'connect';
    let ended = false;
    let timer: NodeJS.Timeout | undefined;
    const socket = connect(target, () => {
      phase = 'write';
      arm(limits.writeMs);
      socket.write(data);
      socket.end(() => {
        ended = true;
        phase = 'close';
        arm(limits.closeMs);
      });
    });
    const settle = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    const fail = (error: Error) => {
      settle();
      socket.destroy();
      reject(error);
    };
    const onAbort = () => fail(new Error('the audit delivery stopped'));
    const arm = (ms: number) => {
      clearTimeout(timer);
      timer = setTimeout(() => fail(new Error(`the audit sink ${target.host}:${target.port} did not ${phase === 'close' ? 'close the connection' : phase} within ${ms} ms`)), ms);
    };
    arm(limits.connectMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    socket.on('error', (error) => fail(new Error(`the audit sink ${target.host}:${target.port}: ${error.message}`)));
    socket.on('end', () => {
      if (!ended) fail(new Error(`the audit sink ${target.host}:${target.port} closed the connection before the batch was written`));
    });
    // Data from a syslog receiver is not expected; reading keeps the stream flowing to its end.
    socket.on('data', () => undefined);
    socket.on('close', (hadError) => {
      settle();
      if (ended && !hadError) resolve();
      else reject(new Error(`the audit sink ${target.host}:${target.port} closed the connection before taking the batch`));
    });
  });
}
