import { parseHostPattern, parseMcpPattern, type GrantKind } from '../permissions/grants.js';
import { isWithin } from '../permissions/paths.js';

/** True when every request `inner` covers is also covered by `outer` (same kind, canonical values). */
export function ruleWithin(kind: GrantKind, inner: string, outer: string): boolean {
  switch (kind) {
    case 'read':
    case 'write':
      return isWithin(outer, inner);
    case 'net': {
      const a = parseHostPattern(inner);
      const b = parseHostPattern(outer);
      if (b.port !== null && a.port !== b.port) return false;
      if (!b.wildcard) return !a.wildcard && a.host === b.host;
      // `*.x` covers the subdomains of x: `*.x` itself, `*.sub.x` and `sub.x` are within it.
      return (a.wildcard && a.host === b.host) || a.host.endsWith(`.${b.host}`);
    }
    case 'run':
    case 'env':
      return inner === outer;
    case 'mcp': {
      const a = parseMcpPattern(inner);
      const b = parseMcpPattern(outer);
      return a.connection === b.connection && (b.tool === '*' || a.tool === b.tool);
    }
  }
}
