/**
 * The SDK 2 MCP client as Ward uses it, for both revisions on one transport stack, stdio and HTTP:
 * a `server/discover` probe first (2026-07-28: stateless, per-request `_meta`, MCP-Protocol-Version
 * and Mcp-Method/Mcp-Name headers), falling back to `initialize` for a 2025 server. Elicitation
 * reaches Ward's elicitor either way: as a server → client request (2025) or as an
 * "input required" result the SDK fulfils and continues (2026-07-28, SEP-2322).
 */
import { Client, type CallToolResult, type ClientContext, type JSONRPCRequest, type ListToolsResult, type RequestOptions, type Result, type Tool } from '@modelcontextprotocol/client';
import { z } from 'zod';
import { invalidHeaderDeclaration } from './tool-headers.js';

/** Elicitation params as sent: Ward reads them itself (parseElicitation). */
const ANY_PARAMS = z.record(z.string(), z.unknown());

const CLIENT_INFO = { name: 'ward', version: '0.1.0' };

export type ServerRequestHandler = (request: JSONRPCRequest, signal: AbortSignal) => Promise<Result>;

/**
 * How a connect finds the revision: `probe` asks server/discover first (2026-07-28) and falls back
 * to initialize; `initialize` is the plain 2025 handshake, for a stdio server that ended on the probe.
 */
export type Negotiation = 'probe' | 'initialize';

export class WardClient extends Client {
  constructor(
    private readonly kind: 'stdio' | 'http',
    limits: { readonly connectTimeoutMs: number; readonly maxListPages: number },
    negotiation: Negotiation,
  ) {
    super(CLIENT_INFO, {
      // Servers may ask the person for input (elicitation, both modes); without an elicitor the answer is decline.
      capabilities: { elicitation: { form: {}, url: {} } },
      // The probe runs on the connection itself (Ward's own stdio transport). A stdio server silent
      // to it is a 2025 server, answered with initialize in the half of the connect bound left;
      // one that exits on it is started again for initialize (McpSession.open). Silence on HTTP is an outage.
      versionNegotiation: negotiation === 'initialize' ? { mode: 'legacy' } : { mode: 'auto', probe: { timeoutMs: kind === 'http' ? limits.connectTimeoutMs : Math.floor(limits.connectTimeoutMs / 2) } },
      // One call may ask for input a few times; each round is the person answering, bounded here.
      inputRequired: { maxRounds: 8 },
      listMaxPages: limits.maxListPages,
    });
  }

  /**
   * Ward reads elicitation requests itself, unvalidated by the SDK (whose checks would refuse
   * some without a word to Ward): as a 2025 server's request and as a 2026 "input required" entry.
   */
  elicit(handler: ServerRequestHandler): void {
    // With its own (open) params schema the SDK skips its wire schema, which would refuse a form
    // Ward cannot show before Ward could journal why (parseElicitation says why, and refuses).
    this.setRequestHandler('elicitation/create', { params: ANY_PARAMS }, (params, ctx) =>
      handler({ jsonrpc: '2.0', id: ctx.mcpReq.id, method: 'elicitation/create', params } as JSONRPCRequest, ctx.mcpReq.signal) as never,
    );
  }

  protected override _wrapHandler(method: string, handler: (request: JSONRPCRequest, ctx: ClientContext) => Promise<Result>): (request: JSONRPCRequest, ctx: ClientContext) => Promise<Result> {
    return method === 'elicitation/create' ? handler : super._wrapHandler(method, handler);
  }

  /** Whether this connection speaks the 2026-07-28 wire (else a 2025 revision after `initialize`). */
  get modern(): boolean {
    return this.getProtocolEra() === 'modern';
  }

  /**
   * One page of tools/list exactly as the server sent it (Ward walks and bounds the pages itself);
   * `unusable` names a tool a 2026-07-28 HTTP client must leave out (a malformed x-mcp-header).
   */
  async listPage(cursor: string | undefined, options: RequestOptions): Promise<ListToolsResult & { headerFaults: ReadonlyMap<string, string> }> {
    const page = await this.request({ method: 'tools/list', params: cursor === undefined ? {} : { cursor } }, options);
    const headerFaults = new Map<string, string>();
    if (this.modern && this.kind === 'http') {
      for (const tool of page.tools) {
        const fault = invalidHeaderDeclaration(tool.inputSchema);
        if (fault !== undefined) headerFaults.set(tool.name, fault);
      }
    }
    return { ...page, headerFaults };
  }

  /**
   * One tool call, never re-sent by the SDK: the tool's definition as Ward listed it goes along,
   * so the SDK mirrors x-mcp-header arguments from it and never re-lists and re-sends after a
   * header mismatch. Input the server asks for comes back through `elicit`, and the SDK sends
   * the same call again with the answers and the server's request state: the call continued.
   */
  callPinned(tool: Tool, args: Record<string, unknown>, options: RequestOptions): Promise<CallToolResult> {
    return this.callTool({ name: tool.name, arguments: args }, { ...options, toolDefinition: tool });
  }
}
