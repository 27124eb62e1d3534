/**
 * The agent specification stored in each immutable agent version: instructions, the model
 * profile it runs with, the upstream MCP servers it may reach (until connections exist: stdio
 * servers named directly) and the tools pinned from them with their schema hashes (B3).
 * Secrets never go into a spec: a stdio upstream names the environment variables it needs and
 * Ward fills them in at run time.
 */
import { z } from 'zod';
import { WardError } from '../core/errors.js';

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

export const PinnedToolSpec = z
  .object({
    upstream: z.string().regex(NAME),
    name: z.string().min(1).max(128),
    exposedName: z.string().regex(NAME),
    description: z.string().max(8192),
    inputSchema: z.looseObject({ type: z.literal('object') }),
    schemaHash: z.string().regex(/^[0-9a-f]{64}$/),
  })
  .strict();

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
      if (spec.upstreams[tool.upstream] === undefined) ctx.addIssue({ code: 'custom', message: `tool ${tool.exposedName} names unknown upstream ${tool.upstream}` });
      if (exposed.has(tool.exposedName)) ctx.addIssue({ code: 'custom', message: `tool name ${tool.exposedName} is pinned twice` });
      if (tool.exposedName === 'approve') ctx.addIssue({ code: 'custom', message: 'the tool name "approve" is reserved for Ward' });
      exposed.add(tool.exposedName);
    }
  });

export type AgentSpec = z.infer<typeof AgentSpecSchema>;
export type PinnedTool = z.infer<typeof PinnedToolSpec>;
export type StdioUpstream = z.infer<typeof StdioUpstreamSpec>;

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
