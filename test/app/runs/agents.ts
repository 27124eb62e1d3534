/** Agents for run-loop tests, pinned from the real stdio fixture MCP server. */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createAgentVersion } from '../../../main/agents/service.js';
import type { AgentVersion } from '../../../main/store/agents.js';
import type { Harness } from './harness.js';

export const FIXTURE_STDIO = path.resolve('test/fixtures/mcp-servers/stdio.ts');

export interface ToolAgent {
  readonly version: AgentVersion;
  /** A marker in the upstream's argv, to find its processes in /proc. */
  readonly marker: string;
}

/** Publishes an agent whose upstream is the stdio fixture; its calls are logged to FIXTURE_CALL_LOG when set. */
export async function publishToolAgent(harness: Harness, name = 'tooly', tools = ['echo', 'slow']): Promise<ToolAgent> {
  const marker = `--ward-test-${randomUUID()}`;
  const version = await createAgentVersion(
    harness.core.store(harness.ns),
    {
      name,
      instructions: 'Use the tools when asked.',
      upstreams: { fixture: { type: 'stdio', command: process.execPath, args: ['--import', 'tsx', FIXTURE_STDIO, marker], envNames: harness.env.FIXTURE_CALL_LOG ? ['FIXTURE_CALL_LOG'] : [] } },
      tools: tools.map((tool) => ({ upstream: 'fixture', tool })),
    },
    harness.env,
  );
  return { version, marker };
}

/** Pids of live processes whose command line contains `marker` (Linux /proc). */
export function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Zombies are dead already; only their exit status is left.
      if (cmdline.includes(marker) && !/\) Z /.test(stat)) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}
