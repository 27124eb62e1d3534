/**
 * The journal's hash chain (J2), on its own so a bundle can be checked on a machine with no Ward
 * data folder (E4): nothing here touches a database.
 */
import { hash } from 'node:crypto';

/** The hash that precedes event 1 of every conversation. */
export const GENESIS_HASH = '0'.repeat(64);

/**
 * An event's hash: SHA-256 over the previous hash, a newline and the event as a JSON array with
 * its payload as the stored JSON text. One-shot hashing: it is on the append path of every event.
 */
export function hashEvent(prevHash: string, conversationId: string, seq: number, runId: string | null, type: string, payload: string, createdAt: string): string {
  return hash('sha256', `${prevHash}\n${JSON.stringify([conversationId, seq, runId, type, payload, createdAt])}`);
}
