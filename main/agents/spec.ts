/**
 * The agent specification stored in each immutable agent version: instructions, the model
 * profile it runs with, the stdio servers named directly in it ("inline upstreams"), and the
 * tools pinned with their schema hashes (B3), each from an inline upstream or from one of the
 * namespace's connections (main/connections/).
 * Secrets never go into a spec: a stdio upstream names the environment variables it needs and
 * Ward fills them in at run time.
 */
import { z } from 'zod';
import { WardError } from '../base/errors.js';
import type { PinnedToolRoute } from '../upstreams/types.js';
import { exposedToolName } from '../connections/config.js';

const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

export const StdioUpstreamSpec = z
  .object({
    type: z.literal('stdio'),
    command: z.string().min(1).max(4096).refine((value) => !value.includes('\0'), 'command must not contain NUL'),
    args: z.array(z.string().max(4096).refine((value) => !value.includes('\0'), 'arguments must not contain NUL')).max(64).default([]),
    /** Names of variables copied from Ward's environment into the server's (values are never stored). */
    envNames: z.array(z.string().regex(ENV_NAME)).max(32).default([]),
  })
  .strict();

const pinnedFields = {
  name: z.string().min(1).max(128),
  exposedName: z.string().regex(NAME),
  description: z.string().max(8192),
  inputSchema: z.looseObject({ type: z.literal('object') }),
  outputSchema: z.looseObject({ type: z.literal('object') }).optional(),
  schemaHash: z.string().regex(/^[0-9a-f]{64}$/),
};

/** A tool of a stdio server named in the spec itself (versions published before connections have only these). */
export const InlineToolSpec = z.object({ upstream: z.string().regex(NAME), ...pinnedFields }).strict();

/** A tool of a namespace connection: at run time it must still be there, on, and unchanged (B3). */
export const ConnectionToolSpec = z.object({ source: z.literal('connection'), connection: z.string().regex(NAME), ...pinnedFields }).strict();

export const PinnedToolSpec = z.union([InlineToolSpec, ConnectionToolSpec]);

export const AgentSpecSchema = z
  .object({
    instructions: z.string().max(256 * 1024),
    modelProfile: z.string().regex(/^[a-z0-9][a-z0-9-]{0,31}$/).default('default'),
    upstreams: z.record(z.string().regex(NAME), StdioUpstreamSpec).default({}),
    tools: z.array(PinnedToolSpec).max(256).default([]),
  })
  .strict()
  .superRefine((spec, ctx) => {
    const exposed = new Set<string>();
    for (const tool of spec.tools) {
      if ('upstream' in tool && spec.upstreams[tool.upstream] === undefined) ctx.addIssue({ code: 'custom', message: `tool ${tool.exposedName} names unknown upstream ${tool.upstream}` });
      // The broker dispatches by route.upstream: a connection and an inline upstream must not share a name.
      if ('connection' in tool && tool.exposedName !== exposedToolName(tool.connection, tool.name)) ctx.addIssue({ code: 'custom', message: `tool ${tool.exposedName} of connection ${tool.connection} must be exposed as ${exposedToolName(tool.connection, tool.name)}` });
      if ('connection' in tool && spec.upstreams[tool.connection] !== undefined) ctx.addIssue({ code: 'custom', message: `tool ${tool.exposedName} names connection ${tool.connection}, which is also an inline upstream` });
      if (exposed.has(tool.exposedName)) ctx.addIssue({ code: 'custom', message: `tool name ${tool.exposedName} is pinned twice` });
      exposed.add(tool.exposedName);
    }
  });

export type AgentSpec = z.infer<typeof AgentSpecSchema>;
export type PinnedTool = z.infer<typeof PinnedToolSpec>;
export type ConnectionTool = z.infer<typeof ConnectionToolSpec>;
export type StdioUpstream = z.infer<typeof StdioUpstreamSpec>;

export function isConnectionTool(tool: PinnedTool): tool is ConnectionTool {
  return 'source' in tool && tool.source === 'connection';
}

/** The inline upstream or connection that serves a pinned tool (what the broker routes by). */
export function toolSource(tool: PinnedTool): string {
  return isConnectionTool(tool) ? tool.connection : tool.upstream;
}

/** The route the broker serves a pinned tool by. */
export function toolRoute(tool: PinnedTool): PinnedToolRoute {
  return {
    exposedName: tool.exposedName,
    upstream: toolSource(tool),
    upstreamName: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema as PinnedToolRoute['inputSchema'],
    ...(tool.outputSchema === undefined ? {} : { outputSchema: tool.outputSchema as PinnedToolRoute['inputSchema'] }),
    schemaHash: tool.schemaHash,
  };
}

/** Parses a stored or user-supplied spec; anything malformed fails closed with the first problem named. */
export function parseAgentSpec(raw: unknown): AgentSpec {
  const parsed = AgentSpecSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
    throw new WardError('invalid_config', `invalid agent spec: ${where}${issue.message}`);
  }
  return parsed.data;
}

export const DEFAULT_AGENT = 'default';

export const DEFAULT_AGENT_SPEC: AgentSpec = {
  instructions: 'You are a helpful assistant running inside Ward. You have no tools unless they are listed.',
  modelProfile: 'default',
  upstreams: {},
  tools: [],
};
