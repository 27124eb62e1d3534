/** Shared set-up for broker tests: a real broker, real upstreams, a real SDK client. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Broker } from '../../main/broker/broker.js';
import type { BrokerEvent, RunBinding, RunRegistration } from '../../main/broker/types.js';
import type { PinnedToolRoute } from '../../main/upstreams/types.js';
import { pinTools } from '../../main/upstreams/pin.js';
import type { Upstreams } from '../../main/upstreams/upstreams.js';

export const STDIO_FIXTURE = ['--import', 'tsx', 'test/fixtures/mcp-servers/stdio.ts'];

/** Pins `names` of `upstream` the way publishing an agent version does. */
export function pin(upstreams: Upstreams, upstream: string, names: readonly string[]): Promise<PinnedToolRoute[]> {
  return pinTools(upstreams, names.map((name) => ({ upstream, name })));
}

export interface TestRun {
  readonly registration: RunRegistration;
  readonly events: BrokerEvent[];
  accepting: boolean;
}

export function registerRun(broker: Broker, runId: string, tools: PinnedToolRoute[], upstreams: Upstreams, extra: Partial<RunBinding> = {}): TestRun {
  const events: BrokerEvent[] = [];
  const run: TestRun = { registration: undefined as unknown as RunRegistration, events, accepting: true };
  const binding: RunBinding = {
    runId,
    tools,
    upstreams,
    isAcceptingCalls: () => run.accepting,
    onEvent: (event) => events.push(event),
    ...extra,
  };
  (run as { registration: RunRegistration }).registration = broker.register(binding);
  return run;
}

export async function connectClient(url: string, capability?: string): Promise<Client> {
  const client = new Client({ name: 'ward-test', version: '1' });
  const headers: Record<string, string> = capability === undefined ? {} : { Authorization: `Bearer ${capability}` };
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

export function textOf(result: unknown): string {
  const content = (result as CallToolResult).content;
  return content.map((item) => (item.type === 'text' ? item.text : `[${item.type}]`)).join('');
}
