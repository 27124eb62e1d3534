/**
 * The contract of a tool call between whoever routes it (the broker) and whoever makes it (the
 * upstream MCP clients): the pinned route, the projected outcome, and the caller interface.
 */

/** A JSON Schema object as MCP carries it. */
export type JsonSchema = { readonly type: 'object'; readonly [key: string]: unknown };

/** One tool pinned in an agent version, routed to the upstream that owns it. */
export interface PinnedToolRoute {
  /** The name the child sees (without the `mcp__ward__` prefix the CLI adds), unique per run. */
  readonly exposedName: string;
  /** Which upstream serves it (a connection or, until connections exist, a stdio server in the agent spec). */
  readonly upstream: string;
  /** The tool's name at the upstream. */
  readonly upstreamName: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  /** The shape of the tool's structured result, when it declares one; listed to the child as is. */
  readonly outputSchema?: JsonSchema;
  /** SHA-256 of the canonical schemas at pinning time (B3, toolSchemaHash). */
  readonly schemaHash: string;
}

/** A link to a resource the server offers (MCP `resource_link`), passed on as a link: Ward fetches nothing. */
export interface ResourceLink {
  readonly type: 'resource_link';
  readonly uri: string;
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly mimeType?: string;
}

/** MCP content the broker hands back to the child (already capped and projected, B5). */
export type ToolContent = { readonly type: 'text'; readonly text: string } | { readonly type: 'image'; readonly data: string; readonly mimeType: string } | ResourceLink;

/** A tool's structured result (MCP `structuredContent`), a JSON object. */
export type StructuredContent = Readonly<Record<string, unknown>>;

export type ToolOutcome =
  | { readonly ok: true; readonly content: readonly ToolContent[]; readonly structuredContent?: StructuredContent; readonly isError: boolean; readonly bytes: number }
  | { readonly ok: false; readonly errorCode: string; readonly message: string };

/** Reaches the upstream MCP server that owns a pinned tool (stdio child or Streamable HTTP). */
export interface UpstreamCaller {
  callTool(route: PinnedToolRoute, args: Record<string, unknown>, signal: AbortSignal): Promise<ToolOutcome>;
}
