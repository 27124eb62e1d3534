/**
 * Connections: connect-and-list for a stdio and a Streamable HTTP server through a Ward
 * connection (spawn/connect, initialize, list, validate, pin in SQLite) against the SDK alone
 * (connect, initialize, list), and a tool call through a connection (registry and pin checks,
 * projection, cap) against the SDK alone. Each figure is a median in ms and a ratio to its
 * baseline measured in the same run.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { openConnections } from '../main/connections/index.js';
import { DataFolder } from '../main/store/data-folder.js';
import { parseNamespace } from '../main/namespaces/namespace.js';
import { startHttpFixture } from '../test/fixtures/mcp-servers/http.js';
import { percentile, round } from './stats.js';

const CONNECT_ROUNDS = 10;
const WARMUP_CALLS = 50;
const CALLS = 300;
const STDIO_SERVER = path.resolve('test/fixtures/mcp-oauth/stdio-server.mjs');

async function elapsed(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

async function sdkConnectAndList(transport: () => Transport): Promise<number> {
  const client = new Client({ name: 'ward-bench', version: '1' });
  const ms = await elapsed(async () => {
    await client.connect(transport());
    await client.listTools();
  });
  await client.close();
  return ms;
}

function summary(ward: number[], sdk: number[]): Record<string, number> {
  const wardMedian = percentile(ward, 50);
  const sdkMedian = percentile(sdk, 50);
  return { wardMedianMs: round(wardMedian), sdkMedianMs: round(sdkMedian), ratio: round(wardMedian / sdkMedian) };
}

export async function benchConnections(): Promise<Record<string, unknown>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-bench-conn-'));
  const core = new DataFolder(path.join(dir, 'home'));
  const ns = parseNamespace(`bench-${randomBytes(4).toString('hex')}`);
  core.createNamespace(ns.name);
  const manager = openConnections(core, ns);
  const fixture = await startHttpFixture();
  const stdioEnv = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };
  try {
    await manager.add({ transport: 'stdio', name: 'local', command: process.execPath, args: [STDIO_SERVER] });
    await manager.add({ transport: 'http', name: 'remote', url: fixture.url });

    // Alternating rounds, so both sides see the same machine load.
    const stdio = { ward: [] as number[], sdk: [] as number[] };
    const http = { ward: [] as number[], sdk: [] as number[] };
    for (let round = 0; round < CONNECT_ROUNDS; round++) {
      await manager.disconnect('local');
      stdio.ward.push(await elapsed(() => manager.discover('local')));
      stdio.sdk.push(await sdkConnectAndList(() => new StdioClientTransport({ command: process.execPath, args: [STDIO_SERVER], env: stdioEnv, stderr: 'pipe' })));
      await manager.disconnect('remote');
      http.ward.push(await elapsed(() => manager.discover('remote')));
      http.sdk.push(await sdkConnectAndList(() => new StreamableHTTPClientTransport(new URL(fixture.url))));
    }

    const route = manager.routes().find((candidate) => candidate.exposedName === 'local__echo');
    if (route === undefined) throw new Error('the stdio fixture has no echo tool');
    const direct = new Client({ name: 'ward-bench', version: '1' });
    await direct.connect(new StdioClientTransport({ command: process.execPath, args: [STDIO_SERVER], env: stdioEnv, stderr: 'pipe' }));
    const viaWard = async (): Promise<void> => {
      const outcome = await manager.caller.callTool(route, { text: 'ping' }, new AbortController().signal);
      if (!outcome.ok) throw new Error(`bench call failed: ${outcome.errorCode}`);
    };
    const viaSdk = async (): Promise<void> => {
      await direct.callTool({ name: 'echo', arguments: { text: 'ping' } });
    };
    for (let i = 0; i < WARMUP_CALLS; i++) {
      await viaWard();
      await viaSdk();
    }
    const calls = { ward: [] as number[], sdk: [] as number[] };
    for (let i = 0; i < CALLS; i++) {
      calls.ward.push(await elapsed(viaWard));
      calls.sdk.push(await elapsed(viaSdk));
    }
    await direct.close();

    return {
      rounds: CONNECT_ROUNDS,
      calls: CALLS,
      stdioConnectAndList: summary(stdio.ward, stdio.sdk),
      httpConnectAndList: summary(http.ward, http.sdk),
      callThroughConnection: { ...summary(calls.ward, calls.sdk), wardP99Ms: round(percentile(calls.ward, 99)), sdkP99Ms: round(percentile(calls.sdk, 99)) },
    };
  } finally {
    for (const view of manager.list()) await manager.remove(view.spec.name).catch(() => undefined);
    await manager.close();
    await fixture.close();
    core.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
