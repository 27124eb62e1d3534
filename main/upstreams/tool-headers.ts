/**
 * SEP-2243 (2026-07-28, Streamable HTTP): a tool may mark primitive arguments with
 * `x-mcp-header` so the client mirrors them into `Mcp-Param-*` headers. A client MUST leave out a
 * tool whose declarations break the rules; Ward lists it as unusable with the reason instead of
 * dropping it without a word. The rules are the spec's: a non-empty RFC 9110 token, on a
 * string, integer or boolean property reached only through `properties`, unique ignoring case.
 */

const RFC9110_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const PERMITTED_TYPES: ReadonlySet<string> = new Set(['string', 'integer', 'boolean']);
/** Keywords whose subschemas a declaration may not sit under (not reached through `properties` alone). */
const UNREACHABLE = ['items', 'prefixItems', 'contains', 'additionalProperties', 'unevaluatedProperties', 'unevaluatedItems', 'propertyNames', 'patternProperties', 'dependentSchemas', 'oneOf', 'anyOf', 'allOf', 'not', 'if', 'then', 'else', '$defs', 'definitions'] as const;
/** Of those, the ones whose value maps names to subschemas. */
const NAMED: ReadonlySet<string> = new Set(['patternProperties', 'dependentSchemas', '$defs', 'definitions']);
/** Bounds the walk of a server's schema (already capped in bytes by the listing). */
const MAX_DEPTH = 64;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function subschemas(keyword: string, value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  return NAMED.has(keyword) && isRecord(value) ? Object.values(value) : [value];
}

/** Why the schema's x-mcp-header declarations are malformed, or undefined when they are fine (or absent). */
export function invalidHeaderDeclaration(inputSchema: unknown): string | undefined {
  const seen = new Map<string, string>();
  const visit = (node: unknown, path: readonly string[], reachable: boolean): string | undefined => {
    if (!isRecord(node) || path.length > MAX_DEPTH) return undefined;
    const where = path.length === 0 ? 'the schema root' : path.join('.');
    if ('x-mcp-header' in node) {
      const header = node['x-mcp-header'];
      if (!reachable || path.length === 0) return `${where}: x-mcp-header is allowed only on a property reached through "properties"`;
      if (typeof header !== 'string' || !RFC9110_TOKEN.test(header)) return `${where}: x-mcp-header must be a non-empty HTTP token`;
      if (typeof node.type !== 'string' || !PERMITTED_TYPES.has(node.type)) return `${where}: x-mcp-header is allowed only on a string, integer or boolean property`;
      const prior = seen.get(header.toLowerCase());
      if (prior !== undefined) return `x-mcp-header ${JSON.stringify(header)} is declared twice (also as ${JSON.stringify(prior)})`;
      seen.set(header.toLowerCase(), header);
    }
    if (isRecord(node.properties)) {
      for (const [name, child] of Object.entries(node.properties)) {
        const fault = visit(child, [...path, name], reachable);
        if (fault !== undefined) return fault;
      }
    }
    for (const keyword of UNREACHABLE) {
      if (node[keyword] === undefined) continue;
      for (const branch of subschemas(keyword, node[keyword])) {
        const fault = visit(branch, [...path, `<${keyword}>`], false);
        if (fault !== undefined) return fault;
      }
    }
    return undefined;
  };
  return visit(inputSchema, [], true);
}
