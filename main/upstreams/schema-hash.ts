/** The pinning hash of a tool's schemas (B3): SHA-256 over canonical JSON. */
import { createHash } from 'node:crypto';

/** JSON with object keys sorted at every depth, so equal schemas hash equally whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const text = JSON.stringify(value);
    // undefined, functions and symbols have no JSON form; inside objects they are dropped like JSON.stringify does.
    return text === undefined ? 'null' : text;
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.keys(value)
    .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
  return `{${entries.join(',')}}`;
}

/** Lowercase hex SHA-256 of the canonical JSON of `inputSchema`. */
export function schemaHash(inputSchema: unknown): string {
  return createHash('sha256').update(canonicalJson(inputSchema), 'utf8').digest('hex');
}

/**
 * What a pin's hash covers: the input schema, and the output schema when the tool has one. A tool
 * without one hashes as its input schema alone, so pins made before output schemas were pinned hold.
 */
export function toolSchemaHash(tool: { readonly inputSchema: unknown; readonly outputSchema?: unknown }): string {
  return tool.outputSchema === undefined ? schemaHash(tool.inputSchema) : schemaHash({ inputSchema: tool.inputSchema, outputSchema: tool.outputSchema });
}
