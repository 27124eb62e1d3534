/**
 * A policy file's JSON text: a leading UTF-8 byte order mark (what some Windows editors write) is
 * accepted, and a key written twice in one object is refused by name. JSON.parse keeps the last
 * of two equal keys silently, so an admin's review of the first would not be what applies.
 */
import { describeError } from '../base/errors.js';
import { shown } from '../base/host-pattern.js';

/** The parsed value; throws an Error whose message completes "FILE …": it is not valid JSON, or which key is repeated where. */
export function parsePolicyJson(text: string): unknown {
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (error) {
    throw new Error(`is not valid JSON (${describeError(error)})`, { cause: error });
  }
  const repeated = firstRepeatedKey(body);
  if (repeated !== null) throw new Error(`has the key ${shown(repeated.key)} twice in ${repeated.where === '' ? 'the top-level object' : shown(repeated.where)}; each key may appear once`);
  return value;
}

interface Scope {
  /** Null for an array. */
  readonly keys: Set<string> | null;
  readonly path: string;
  /** The key whose value opens the next object or array. */
  pending: string;
}

/**
 * One linear scan of text JSON.parse has already accepted: strings are skipped whole (escapes
 * included) and a string followed by ":" is a key of the innermost object. Bounded by the
 * file's size limit, so it needs no limit of its own.
 */
function firstRepeatedKey(text: string): { key: string; where: string } | null {
  const scopes: Scope[] = [];
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index];
    if (char === '"') {
      let end = index + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      let next = end + 1;
      while (/\s/.test(text[next] ?? '')) next += 1;
      const scope = scopes.at(-1);
      if (text[next] === ':' && scope?.keys != null) {
        const key = JSON.parse(text.slice(index, end + 1)) as string;
        if (scope.keys.has(key)) return { key, where: scope.path };
        scope.keys.add(key);
        scope.pending = key;
      }
      index = end;
    } else if (char === '{' || char === '[') {
      const parent = scopes.at(-1);
      const name = parent === undefined ? '' : parent.keys === null ? `${parent.path}[]` : parent.path === '' ? parent.pending : `${parent.path}.${parent.pending}`;
      scopes.push({ keys: char === '{' ? new Set() : null, path: name, pending: '' });
    } else if (char === '}' || char === ']') {
      scopes.pop();
    }
  }
  return null;
}
