/**
 * The journal's hash chain (J2), on its own so a bundle can be checked on a machine with no Ward
 * data folder (E4): nothing here touches a database.
 */
import { hash } from 'node:crypto';
import { canonicalize } from '../base/jcs.js';

/** The hash that precedes event 1 of every conversation. */
export const GENESIS_HASH = '0'.repeat(64);

/**
 * An event's hash: SHA-256 over the previous hash, a newline and the event as the RFC 8785 (JCS)
 * form of the array [conversationId, seq, runId, type, payload, createdAt], its payload as the
 * stored JSON text. Journals hashed before Ward named JCS hashed JSON.stringify of the same array,
 * which is the same bytes for every array an event can be (strings without lone surrogates, since
 * the payload is JSON.stringify's own output; a whole seq; null): no journal needs migrating.
 * One-shot hashing: it is on the append path of every event.
 */
export function hashEvent(prevHash: string, conversationId: string, seq: number, runId: string | null, type: string, payload: string, createdAt: string): string {
  return hashCanonicalEvent(prevHash, canonicalize([conversationId, seq, runId, type, payload, createdAt]));
}

/** The same hash from the array's JCS text, for an export that writes the same escaped strings into its line. */
export function hashCanonicalEvent(prevHash: string, canonicalArray: string): string {
  return hash('sha256', `${prevHash}\n${canonicalArray}`);
}
