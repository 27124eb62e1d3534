/**
 * RFC 8785, the JSON Canonicalization Scheme: the one encoding of every JSON value Ward hashes or
 * signs (event hashes, the statement), so any JCS library in any language gets the same bytes.
 * ECMAScript's own serializers are what JCS specifies for strings and numbers (RFC 8785 3.2.2),
 * and JavaScript's string comparison is the UTF-16 code unit order it sorts properties by (3.2.3).
 */
import { WardError } from './errors.js';

function refuse(why: string): never {
  throw new WardError('usage', `not canonical JSON (RFC 8785): ${why}`);
}

/** Compares by UTF-16 code units, never by locale. */
const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** String.prototype.isWellFormed (ES2024, in every Node Ward runs on): native, unlike a regex scan of each payload. */
const isWellFormed = (text: string): boolean => (text as unknown as { isWellFormed(): boolean }).isWellFormed();

/** A string's JCS form, or null when it holds a lone surrogate (which JCS cannot say). */
export function canonicalString(text: string): string | null {
  return isWellFormed(text) ? JSON.stringify(text) : null;
}

function serializeString(text: string): string {
  // I-JSON (RFC 7493), which JCS requires: no lone surrogates.
  if (!isWellFormed(text)) refuse('a string holds a lone surrogate');
  return JSON.stringify(text);
}

/** A value JSON.stringify writes exactly as JCS does: null, a boolean, a finite number, a well-formed string. */
const isPrimitive = (item: unknown): boolean => item === null || typeof item === 'boolean' || (typeof item === 'number' && Number.isFinite(item)) || (typeof item === 'string' && isWellFormed(item));

/** The canonical form of `value`; refuses what JSON cannot say exactly (NaN, Infinity, undefined, functions). */
export function canonicalize(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) refuse(`${value} is not a JSON number`);
      // Number.prototype.toString is RFC 8785's number serialization; -0 becomes 0.
      return JSON.stringify(value);
    case 'string':
      return serializeString(value);
    case 'object': {
      // An array of JSON primitives (the event hash's) is already in its JCS form as JSON.stringify writes it.
      if (Array.isArray(value)) return value.every(isPrimitive) ? JSON.stringify(value) : `[${value.map(canonicalize).join(',')}]`;
      const record = value as Record<string, unknown>;
      const members = Object.keys(record)
        .filter((key) => record[key] !== undefined)
        .sort(byCodeUnits)
        .map((key) => `${serializeString(key)}:${canonicalize(record[key])}`);
      return `{${members.join(',')}}`;
    }
    default:
      return refuse(`a ${typeof value} has no JSON form`);
  }
}
