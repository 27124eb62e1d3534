/** The identity of one MCP call, so an approval "once" covers exactly the next identical call. */
import { createHash } from 'node:crypto';

/** JSON with object keys sorted: the same arguments give the same text whatever order they came in. */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${stableJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function callKey(exposedName: string, args: unknown): string {
  return createHash('sha256').update(exposedName).update('\0').update(stableJson(args)).digest('hex');
}
