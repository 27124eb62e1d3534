import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { buildSync } from 'esbuild';
import { afterEach } from 'vitest';
import { DataFolder } from '../../main/store/data-folder.js';
import { openConnections, type ConnectionManager } from '../../main/connections/index.js';
import { parseNamespace, type Namespace } from '../../main/namespaces/namespace.js';
import type { ConnectionManagerOptions } from '../../main/connections/manager.js';
import { followToCallback } from '../fixtures/oidc/provider.js';
import { startModelProvider, type ModelProvider } from '../fixtures/model-provider/provider.js';
import { CANARY_KEY } from '../app/runs/harness.js';
import { tempDir } from '../support/temp.js';
import { WARD_BIN } from '../support/ward-cli.js';

export const STDIO_SERVER = path.resolve('test/fixtures/mcp-oauth/stdio-server.mjs');

export interface Harness {
  readonly core: DataFolder;
  readonly ns: Namespace;
  readonly manager: ConnectionManager;
  readonly dir: string;
  /** A fresh manager over the same namespace (a second Ward process, as far as state goes). */
  reopen(options?: { limits?: ConnectionManagerOptions['limits']; now?: () => number }): ConnectionManager;
}

const open: Array<{ core: DataFolder; managers: ConnectionManager[] }> = [];

/** A real data folder, namespace database and keychain-backed secret store (unique namespace per test). */
export function harness(options: { limits?: ConnectionManagerOptions['limits']; now?: () => number } = {}): Harness {
  const dir = tempDir('ward-conn-');
  const core = new DataFolder(path.join(dir, 'home'));
  const ns = parseNamespace(`t-${randomBytes(6).toString('hex')}`);
  core.createNamespace(ns.name);
  const entry = { core, managers: [] as ConnectionManager[] };
  open.push(entry);
  const make = (opts: typeof options): ConnectionManager => {
    const manager = openConnections(core, ns, { store: { kind: 'keychain' }, ...opts });
    entry.managers.push(manager);
    return manager;
  };
  return { core, ns, dir, manager: make(options), reopen: make };
}

afterEach(async () => {
  for (const entry of open.splice(0)) {
    for (const manager of entry.managers) {
      for (const view of manager.list()) await manager.remove(view.spec.name).catch(() => undefined);
      await manager.close();
    }
    entry.core.close();
  }
});

export function stdioSpec(name: string, ...args: string[]): { transport: 'stdio'; name: string; command: string; args: string[] } {
  return { transport: 'stdio', name, command: process.execPath, args: [STDIO_SERVER, ...args] };
}

export function pids(file: string): number[] {
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map(Number);
}

/** Every byte of a namespace's database files (main file and WAL). */
export function databaseBytes(h: Harness): Buffer {
  const file = h.core.store(h.ns).file;
  return Buffer.concat([file, `${file}-wal`].filter((f) => fs.existsSync(f)).map((f) => fs.readFileSync(f)));
}

export const signal = (): AbortSignal => new AbortController().signal;

/** `ward connections login NAME --no-browser`, playing the browser at the address it prints. */
export function loginPlayingBrowser(env: NodeJS.ProcessEnv, name: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WARD_BIN, 'connections', 'login', name, '--no-browser', '--timeout', '30'], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let played = false;
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const match = /(http:\/\/127\.0\.0\.1:\d+\/auth\?\S+)/.exec(stderr);
      if (match !== null && !played) {
        played = true;
        followToCallback(new URL(match[1]!))
          .then((callback) => fetch(callback))
          .catch(reject);
      }
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * The fixture MCP server (test/fixtures/mcp-servers/stdio.ts, with its --probes tools) bundled
 * into one executable file in a folder of its own, as an installed server is: a sandboxed
 * connection sees its program's folder and nothing of this checkout.
 */
export function bundledProbeServer(dir: string): string {
  const file = path.join(dir, 'probe-server', 'mcp-server.mjs');
  buildSync({
    entryPoints: [path.resolve('test/fixtures/mcp-servers/stdio.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile: file,
    // The SDK's CommonJS dependencies call require(), which an ES module must be given.
    banner: { js: `#!${process.execPath}\nimport { createRequire as wardCreateRequire } from 'node:module'; const require = wardCreateRequire(import.meta.url);` },
    logLevel: 'warning',
  });
  fs.chmodSync(file, 0o755);
  return file;
}

export interface RunnableHome {
  readonly dir: string;
  readonly home: string;
  /** The environment `ward` runs with: this home, the provider, the model key. */
  readonly env: NodeJS.ProcessEnv;
  readonly provider: ModelProvider;
  /** Instructions for `ward agents create --instructions-file`. */
  readonly instructions: string;
}

const providers: ModelProvider[] = [];
afterEach(async () => {
  for (const provider of providers.splice(0)) await provider.close();
});

/** A data folder with a file credential store (the model key comes from the environment) and a scripted model provider, closed after the test. */
export async function runnableHome(prefix: string): Promise<RunnableHome> {
  const dir = tempDir(prefix);
  const home = path.join(dir, 'home');
  fs.mkdirSync(home);
  fs.writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ credentialStore: 'file' }));
  const provider = await startModelProvider();
  providers.push(provider);
  const instructions = path.join(dir, 'instructions.md');
  fs.writeFileSync(instructions, 'Use the tools when asked.');
  return { dir, home, provider, instructions, env: { HOME: dir, TMPDIR: dir, WARD_HOME: home, ANTHROPIC_API_KEY: CANARY_KEY, WARD_MODEL_BASE_URL: provider.url } };
}
