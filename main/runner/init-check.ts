import { WARD_SERVER } from './argv.js';
import type { InitMessage } from './stream-parser.js';

export interface ExpectedInit {
  readonly sessionId: string;
  /** Full tool names the child must see: `mcp__ward__<exposed>` plus granted native tools. */
  readonly tools: readonly string[];
  /** Whether Ward's MCP server was configured (the agent has MCP tools); without, the CLI loads no server at all. */
  readonly servesTools: boolean;
  /** The pinned CLI version (R1): the binary that runs must say it is the one Ward verified. */
  readonly version: string;
}

/**
 * R3: the host checks the child's `system/init` against what it configured. Returns the reason
 * to abort the turn, or null when the child sees exactly the configured tools and servers.
 */
export function checkInit(init: InitMessage, expected: ExpectedInit): string | null {
  if (init.sessionId !== expected.sessionId) return `the CLI reported session ${init.sessionId}, expected ${expected.sessionId}`;
  if (init.version !== expected.version) return `the CLI reported version ${init.version}, pinned ${expected.version}`;
  const servers = init.mcpServers.map((server) => server.name);
  const extra = servers.filter((name) => name !== WARD_SERVER);
  if (extra.length > 0) return `the CLI loaded MCP servers Ward did not configure: ${extra.join(', ')}`;
  const ward = init.mcpServers.find((server) => server.name === WARD_SERVER);
  if (!expected.servesTools && ward !== undefined) return "the CLI loaded Ward's tool broker, which this run did not configure";
  if (expected.servesTools && ward === undefined) return "the CLI did not load Ward's tool broker";
  if (ward !== undefined && ward.status !== 'connected') return `the CLI could not connect to Ward's tool broker (status ${ward.status})`;
  const seen = new Set(init.tools);
  const wanted = new Set(expected.tools);
  const unexpectedTools = [...seen].filter((tool) => !wanted.has(tool));
  const missing = [...wanted].filter((tool) => !seen.has(tool));
  if (unexpectedTools.length > 0) return `the CLI offers tools that were not granted: ${unexpectedTools.slice(0, 10).join(', ')}`;
  if (missing.length > 0) return `the CLI is missing pinned tools: ${missing.slice(0, 10).join(', ')}`;
  return null;
}
