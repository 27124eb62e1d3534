import { spawn as nodeSpawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WardError } from '../base/errors.js';
import { MAX_SECRET_BYTES, type SecretBackend } from './secret-store.js';

export const DPAPI_TIMEOUT_MS = 15_000;
const HELPER_RELATIVE = path.join('native-helpers', 'windows', 'ward-dpapi.ps1');
/** Only what PowerShell and DPAPI need to find the user's profile (R2: never process.env whole). */
const ENV_ALLOWLIST = ['SystemRoot', 'windir', 'LOCALAPPDATA', 'USERPROFILE', 'APPDATA', 'TEMP', 'TMP', 'PATH', 'PSModulePath', 'ComSpec'];

export type SpawnFn = typeof nodeSpawn;

/** The helper ships beside the app: walk up from this module to the folder that holds native-helpers/. */
export function defaultDpapiHelperPath(from = path.dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, HELPER_RELATIVE);
    if (fs.existsSync(candidate)) return candidate;
    if (path.dirname(dir) === dir) return path.join(from, HELPER_RELATIVE);
  }
}

interface HelperResult {
  code: number | null;
  stdout: Buffer;
}

/**
 * Windows CurrentUser DPAPI through the fixed helper `ward-dpapi.ps1` (C1): argv carries only
 * the action and two hashes; the secret goes through stdin and comes back on stdout. Any failure
 * of PowerShell or DPAPI is `keychain_unavailable`; there is no plaintext path.
 */
export class DpapiBackend implements SecretBackend {
  readonly kind = 'dpapi';

  constructor(
    private readonly options: { helperPath?: string; spawn?: SpawnFn; env?: NodeJS.ProcessEnv; timeoutMs?: number; powershell?: string } = {},
  ) {}

  /** The exact argv for one helper call; exported through a method so the contract is testable. */
  argv(action: 'get' | 'set' | 'delete', entry: string): string[] {
    const slash = entry.indexOf('/');
    const namespaceHash = entry.slice(0, slash);
    if (!/^[0-9a-f]{64}$/.test(namespaceHash)) throw new WardError('internal', 'a DPAPI entry must start with a namespace hash');
    return this.helperArgv(action, namespaceHash, createHash('sha256').update(entry).digest('hex'));
  }

  private helperArgv(action: 'get' | 'set' | 'delete', namespaceHash: string, entryHash: string): string[] {
    const helper = this.options.helperPath ?? defaultDpapiHelperPath();
    return ['-NoLogo', '-NoProfile', '-NonInteractive', '-ExecutionPolicy', 'Bypass', '-File', helper, '-Action', action, '-Entry', entryHash, '-Namespace', namespaceHash];
  }

  private run(action: 'get' | 'set' | 'delete', entry: string, input?: string, argv: string[] = this.argv(action, entry)): Promise<HelperResult> {
    const env: NodeJS.ProcessEnv = {};
    const source = this.options.env ?? process.env;
    for (const name of ENV_ALLOWLIST) if (source[name] !== undefined) env[name] = source[name];
    const timeoutMs = this.options.timeoutMs ?? DPAPI_TIMEOUT_MS;
    const fail = (why: string, cause?: unknown) =>
      new WardError('keychain_unavailable', `the Windows DPAPI helper could not ${action} the secret: ${why}. Ward does not fall back to plaintext; check that PowerShell runs and the Windows profile is loaded`, { cause });
    return new Promise((resolve, reject) => {
      const child = (this.options.spawn ?? nodeSpawn)(this.options.powershell ?? 'powershell.exe', argv, {
        env,
        stdio: ['pipe', 'pipe', 'pipe'],
        windowsHide: true,
      });
      const chunks: Buffer[] = [];
      let size = 0;
      let stderr = '';
      const timer = setTimeout(() => {
        child.kill();
        reject(fail(`no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      child.stdout?.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_SECRET_BYTES) {
          child.kill();
          return;
        }
        chunks.push(chunk);
      });
      child.stderr?.on('data', (chunk: Buffer) => {
        if (stderr.length < 2_000) stderr += chunk.toString('utf8');
      });
      child.on('error', (error) => {
        clearTimeout(timer);
        reject(fail(error.message, error));
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        if (size > MAX_SECRET_BYTES) reject(fail('the helper answered with too much data'));
        else if (code === 0 || code === 3) resolve({ code, stdout: Buffer.concat(chunks) });
        else reject(fail(`exit code ${code}${stderr ? ` (${stderr.trim().split('\n')[0]})` : ''}`));
      });
      child.stdin?.on('error', () => undefined); // a helper that exits early surfaces through 'close'
      child.stdin?.end(input ?? '');
    });
  }

  async get(entry: string): Promise<string | undefined> {
    const result = await this.run('get', entry);
    return result.code === 3 ? undefined : result.stdout.toString('utf8');
  }

  async set(entry: string, secret: string): Promise<void> {
    await this.run('set', entry, secret);
  }

  async delete(entry: string): Promise<boolean> {
    return (await this.run('delete', entry)).code === 0;
  }

  /** The helper keeps one file per entry, named by its hash, in the namespace's folder; each is read back through the helper. */
  async list(prefix: string): Promise<Array<{ entry: string; secret: string }>> {
    const namespaceHash = prefix.replace(/\/$/, '');
    const dir = path.join(this.options.env?.LOCALAPPDATA ?? process.env.LOCALAPPDATA ?? '', 'Ward', 'secrets', namespaceHash);
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch {
      return [];
    }
    const found: Array<{ entry: string; secret: string }> = [];
    for (const name of names) {
      const entryHash = /^([0-9a-f]{64})\.dpapi$/.exec(name)?.[1];
      if (entryHash === undefined) continue;
      const result = await this.run('get', name, undefined, this.helperArgv('get', namespaceHash, entryHash));
      if (result.code === 0) found.push({ entry: `${prefix}dpapi-${entryHash.slice(0, 12)}`, secret: result.stdout.toString('utf8') });
    }
    return found;
  }
}
