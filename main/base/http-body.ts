/** Reading an HTTP request body on Ward's own loopback servers, bounded. */
import type { IncomingMessage } from 'node:http';

/**
 * The whole body, or null as soon as it is known to exceed `limit` bytes (declared or counted;
 * the caller answers 413). The rest of an oversized body is drained, never buffered.
 */
export function readBoundedBody(req: IncomingMessage, limit: number): Promise<Buffer | null> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve(null);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.resume();
        resolve(null);
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
