/**
 * Broker overhead per tool call (B-target: p50 +≤1 ms): an SDK client calling the echo fixture
 * directly over Streamable HTTP on loopback, against the same client calling it through the
 * broker (child → broker → upstream client → echo). Calls alternate so both see the same load.
 * Everything runs in this one process, so CPU per call (client + broker + echo server) is
 * reported too: on a busy machine it says more than wall time.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Broker } from '../main/broker/broker.js';
import { schemaHash } from '../main/upstreams/schema-hash.js';
import { openUpstreams } from '../main/upstreams/upstreams.js';
import { startHttpFixture } from '../test/fixtures/mcp-servers/http.js';
import { percentile, round } from './stats.js';

const WARMUP = 100;
const CALLS = 500;
const TARGET_ADDED_P50_MS = 1;

async function connect(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'ward-bench', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

async function timedCall(client: Client, name: string): Promise<number> {
  const start = process.hrtime.bigint();
  const result = await client.callTool({ name, arguments: { text: 'ping' } });
  const elapsed = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.isError === true) throw new Error(`bench call to ${name} failed`);
  return elapsed;
}

export async function benchBrokerOverhead(): Promise<Record<string, unknown>> {
  const fixture = await startHttpFixture();
  const upstreams = await openUpstreams({ echo: { type: 'http', url: fixture.url } });
  const broker = await Broker.start();
  try {
    const tool = (await upstreams.listTools('echo')).find((candidate) => candidate.name === 'echo')!;
    const registration = broker.register({
      runId: 'bench',
      tools: [{ exposedName: 'echo', upstream: 'echo', upstreamName: 'echo', description: '', inputSchema: tool.inputSchema, schemaHash: schemaHash(tool.inputSchema) }],
      upstreams,
      isAcceptingCalls: () => true,
      onEvent: () => undefined,
    });
    const direct = await connect(fixture.url);
    const brokered = await connect(registration.url, { Authorization: `Bearer ${registration.capability}` });
    for (let i = 0; i < WARMUP; i++) {
      await timedCall(direct, 'echo');
      await timedCall(brokered, 'echo');
    }
    const baseline: number[] = [];
    const viaBroker: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      baseline.push(await timedCall(direct, 'echo'));
      viaBroker.push(await timedCall(brokered, 'echo'));
    }
    // CPU per call is far less sensitive than wall time to other load on a shared machine.
    const cpuMsPerCall = async (client: Client): Promise<number> => {
      const before = process.cpuUsage();
      for (let i = 0; i < CALLS; i++) await timedCall(client, 'echo');
      const used = process.cpuUsage(before);
      return (used.user + used.system) / 1000 / CALLS;
    };
    const baselineCpuMs = await cpuMsPerCall(direct);
    const brokerCpuMs = await cpuMsPerCall(brokered);
    await direct.close();
    await brokered.close();
    await registration.close();
    const baselineP50Ms = percentile(baseline, 50);
    const brokerP50Ms = percentile(viaBroker, 50);
    const addedP50Ms = brokerP50Ms - baselineP50Ms;
    return {
      calls: CALLS,
      baselineP50Ms: round(baselineP50Ms),
      baselineP99Ms: round(percentile(baseline, 99)),
      brokerP50Ms: round(brokerP50Ms),
      brokerP99Ms: round(percentile(viaBroker, 99)),
      addedP50Ms: round(addedP50Ms),
      addedP99Ms: round(percentile(viaBroker, 99) - percentile(baseline, 99)),
      ratioP50ToBaseline: round(brokerP50Ms / baselineP50Ms, 2),
      baselineCpuMsPerCall: round(baselineCpuMs),
      brokerCpuMsPerCall: round(brokerCpuMs),
      addedCpuMsPerCall: round(brokerCpuMs - baselineCpuMs),
      targetAddedP50Ms: TARGET_ADDED_P50_MS,
      pass: addedP50Ms <= TARGET_ADDED_P50_MS,
    };
  } finally {
    await broker.close();
    await upstreams.close();
    await fixture.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write(`${JSON.stringify(await benchBrokerOverhead(), null, 2)}\n`);
}
