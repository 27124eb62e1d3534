import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach } from 'vitest';
import { openSecretStore } from '../../main/credentials/open-store.js';
import type { AuthContext } from '../../main/auth/context.js';
import { parseNamespace } from '../../main/namespaces/namespace.js';
import { startOidcProvider, type OidcFixture } from '../fixtures/oidc/provider.js';
import { REPO_ROOT, WARD_BIN } from '../support/ward-cli.js';

const running: OidcFixture[] = [];

/** A real provider, closed after the test. */
export async function provider(options: { accessTokenTtlSeconds?: number } = {}): Promise<OidcFixture> {
  const fixture = await startOidcProvider(options);
  running.push(fixture);
  return fixture;
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((fixture) => fixture.close()));
});

/** A namespace of a data folder, with its secrets in the real OS keychain. */
export function authContext(home: string, namespace = 'default', extra: Partial<AuthContext> = {}): AuthContext {
  const ns = parseNamespace(namespace);
  return { home, namespace: ns, store: openSecretStore(home, ns, { kind: 'keychain' }), requestTimeoutMs: 10_000, ...extra };
}

export interface WardRun {
  readonly child: ChildProcessWithoutNullStreams;
  /** Resolves with the first stderr match (bounded). */
  stderrMatch(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  readonly done: Promise<{ code: number | null; stdout: string; stderr: string }>;
}

/** Runs `ward` in its own process with an explicit environment: the keychain's D-Bus address and a data folder. */
export function spawnWard(args: readonly string[], env: NodeJS.ProcessEnv, input?: string, timeoutMs = 60_000): WardRun {
  const child = spawn(process.execPath, [WARD_BIN, ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const waiters: (() => void)[] = [];
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    for (const wake of waiters.splice(0)) wake();
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      for (const wake of waiters.splice(0)) wake();
      resolve({ code, stdout, stderr });
    });
  });
  if (input !== undefined) child.stdin.end(input);
  const stderrMatch = async (pattern: RegExp, waitMs = 30_000): Promise<RegExpMatchArray> => {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const match = pattern.exec(stderr);
      if (match) return match;
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`ward ${args[0]} stderr never matched ${pattern}: ${stderr}`);
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 200);
      });
    }
  };
  return { child, stderrMatch, done };
}

export function runWard(args: readonly string[], env: NodeJS.ProcessEnv, input = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return spawnWard(args, env, input).done;
}

/** The environment a `ward` child needs to reach the test keychain, and nothing else of ours. */
export function wardEnv(home: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { HOME: home, WARD_HOME: home, DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS, ...extra };
}

/** Every regular file under `dir`, for canary scans. */
export function filesUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name));
}

export function expectNoCanary(haystacks: readonly string[], canaries: readonly string[]): void {
  for (const canary of canaries) for (const text of haystacks) if (text.includes(canary)) throw new Error(`a secret leaked: found ${canary.slice(0, 6)}… in output or a file`);
}

export function expectNoCanaryInFiles(dir: string, canaries: readonly string[]): void {
  for (const file of filesUnder(dir)) {
    const bytes = fs.readFileSync(file).toString('latin1');
    for (const canary of canaries) if (bytes.includes(canary)) throw new Error(`a secret leaked into ${path.relative(dir, file)}`);
  }
}
