/**
 * The tool broker as the server under test of the suite's server scenarios: one registered run
 * with a pinned tool of the fixture MCP server, as a run has. Prints `{"url","capability"}` as one
 * line on stdout (a throwaway capability for this process only) and serves until stdin ends.
 */
import { Broker } from '../../main/broker/broker.js';
import { pinTools } from '../../main/upstreams/pin.js';
import { openUpstreams } from '../../main/upstreams/upstreams.js';

const upstreams = await openUpstreams({ fx: { type: 'stdio', command: process.execPath, args: ['--import', 'tsx', 'test/fixtures/mcp-servers/stdio.ts'] } });
const broker = await Broker.start();
const routes = await pinTools(upstreams, [{ upstream: 'fx', name: 'echo' }]);
const registration = broker.register({ runId: 'conformance', tools: routes, upstreams, isAcceptingCalls: () => true, onEvent: () => undefined });
process.stdout.write(`${JSON.stringify({ url: registration.url, capability: registration.capability })}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  void (async () => {
    await registration.close();
    await broker.close();
    await upstreams.close();
    process.exit(0);
  })();
});
