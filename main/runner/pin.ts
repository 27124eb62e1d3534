/**
 * R1: the Claude CLI Ward runs is pinned by path, version and SHA-256. The binary comes from the
 * platform package of the exact `@anthropic-ai/claude-code` version in Ward's package.json; its
 * hash must match cli-pin.json, committed next to this file. Hashing ~370 MB takes about a
 * second, so the hash is cached per (path, size, mtime, inode, ctime) and re-computed only when
 * the file changed; the cheap stat runs before every spawn.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WardError } from '../base/errors.js';
import { fileIdentity, sameFileIdentity, type FileIdentity as Fingerprint } from '../base/file-identity.js';
import pinFile from './cli-pin.json' with { type: 'json' };

export const CLI_PACKAGE = '@anthropic-ai/claude-code';

export interface CliPin {
  readonly version: string;
  /** Hex SHA-256 per platform key (`linux-x64`, `darwin-arm64`, `win32-x64`, `linux-x64-musl`, ...). */
  readonly sha256: Readonly<Record<string, string>>;
}

export interface PinnedCli {
  readonly path: string;
  readonly version: string;
  readonly sha256: string;
  readonly platformKey: string;
}

export interface PinLocation {
  /** The binary to check. Defaults to the platform package's binary. */
  readonly binaryPath?: string;
  /** The version the binary's package must carry. Defaults to Ward's package.json dependency. */
  readonly expectedVersion?: string;
  readonly pin?: CliPin;
  readonly platformKey?: string;
  /**
   * Where a verified hash is remembered across processes (cliVerificationCache(home)), so a
   * cold `ward` does not read 370 MB before every command. The record holds only public data.
   */
  readonly verifiedCacheFile?: string;
}

/** The data folder's record of the last verified CLI binary. */
export function cliVerificationCache(home: string): string {
  return path.join(home, 'cli-verified.json');
}

export const COMMITTED_PIN: CliPin = pinFile;

let glibc: boolean | undefined;

/** `linux-x64`, `linux-x64-musl`, `darwin-arm64`, `win32-x64`: the suffix of the platform package. */
export function platformKey(platform: NodeJS.Platform = process.platform, arch: string = process.arch): string {
  const base = `${platform}-${arch}`;
  if (platform !== 'linux') return base;
  // The C library does not change while Ward runs.
  glibc ??= runsOnGlibc();
  return glibc ? base : `${base}-musl`;
}

/**
 * Whether this (Linux) process runs on glibc: by the C library it has mapped (/proc/self/maps,
 * under a millisecond), else by the diagnostic report's header, which takes 6–20 ms before every
 * `ward run`'s spawn (issue 29).
 */
export function runsOnGlibc(maps: () => string = () => fs.readFileSync('/proc/self/maps', 'utf8')): boolean {
  try {
    const mapped = maps();
    if (/\/(ld-musl-|libc\.musl-)/.test(mapped)) return false;
    if (/\/libc(\.so\.6|-2\.\d+\.so)\s/.test(mapped)) return true;
  } catch {
    // no /proc here: the report says
  }
  return (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header?.glibcVersionRuntime !== undefined;
}

type WardPackage = { path: string; json: { name?: string; version?: string; dependencies?: Record<string, string> } };
let wardPackage: WardPackage | undefined;

/** Ward's own package.json: the nearest one named "ward" above this module (source or dist/); read once per process. */
function wardPackageJson(): WardPackage {
  wardPackage ??= findWardPackageJson();
  return wardPackage;
}

function findWardPackageJson(): WardPackage {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 6; depth += 1) {
    const candidate = path.join(dir, 'package.json');
    if (fs.existsSync(candidate)) {
      const json = JSON.parse(fs.readFileSync(candidate, 'utf8')) as { name?: string; version?: string; dependencies?: Record<string, string> };
      if (json.name === 'ward') return { path: candidate, json };
    }
    dir = path.dirname(dir);
  }
  throw new WardError('cli_pin_mismatch', "cannot find Ward's package.json to read the pinned CLI version");
}

/** Ward's own version, as its package.json gives it (exports record it). */
export function wardVersion(): string {
  return wardPackageJson().json.version ?? 'unknown';
}

/** The exact version of the CLI package Ward depends on; a range is refused (R1 needs one version). */
export function expectedCliVersion(): { version: string; packageJson: string } {
  const { path: file, json } = wardPackageJson();
  const spec = json.dependencies?.[CLI_PACKAGE];
  if (spec === undefined || !/^\d+\.\d+\.\d+$/.test(spec)) {
    throw new WardError('cli_pin_mismatch', `${file} must depend on ${CLI_PACKAGE} at an exact version (found ${JSON.stringify(spec ?? null)})`);
  }
  return { version: spec, packageJson: file };
}

/** Where the platform package's binary and package.json are, resolved like Node resolves modules. */
export function locatePlatformBinary(key: string = platformKey()): { binary: string; packageJson: string } {
  const name = `${CLI_PACKAGE}-${key}`;
  let packageJson: string;
  try {
    const require = createRequire(wardPackageJson().path);
    packageJson = require.resolve(`${name}/package.json`);
  } catch (error) {
    throw new WardError('cli_pin_mismatch', `the pinned CLI's platform package ${name} is not installed; run "npm ci" in the Ward folder`, { cause: error });
  }
  // In an installed desktop app the binary is unpacked beside app.asar (electron-builder.yml
  // asarUnpack): a path inside the archive could be read but never executed.
  const packageDir = path.dirname(packageJson).replace(`${path.sep}app.asar${path.sep}`, `${path.sep}app.asar.unpacked${path.sep}`);
  const binary = path.join(packageDir, key.startsWith('win32') ? 'claude.exe' : 'claude');
  return { binary, packageJson };
}

const hashCache = new Map<string, { fingerprint: Fingerprint; sha256: string }>();

function fingerprintOf(file: string): Fingerprint {
  const stat = fs.statSync(file);
  if (!stat.isFile()) throw new WardError('cli_pin_mismatch', `${file} is not a file`);
  return fileIdentity(stat);
}

interface VerifiedRecord {
  readonly file: string;
  readonly fingerprint: Fingerprint;
  readonly sha256: string;
}

/**
 * How many binaries the record vouches for: the desktop app and a `ward` installed apart share a
 * data folder but each has its own CLI; with one entry, every switch between them read 370 MB again.
 */
const MAX_VERIFIED_RECORDS = 4;

function readVerifiedRecords(cacheFile: string | undefined): VerifiedRecord[] {
  if (cacheFile === undefined) return [];
  try {
    const { records } = JSON.parse(fs.readFileSync(cacheFile, 'utf8')) as { records?: unknown };
    return Array.isArray(records) ? (records as VerifiedRecord[]) : [];
  } catch {
    return []; // absent or unreadable: hash the file
  }
}

function verifiedHash(records: readonly VerifiedRecord[], file: string, now: Fingerprint): string | undefined {
  const record = records.find((candidate) => candidate?.file === file);
  const valid = record !== undefined && typeof record.sha256 === 'string' && /^[0-9a-f]{64}$/.test(record.sha256) && sameFileIdentity(record.fingerprint, now);
  return valid ? record.sha256 : undefined;
}

/** Puts `record` first, replacing the file's old one; the oldest beyond the bound go. */
function writeVerifiedRecord(cacheFile: string, record: VerifiedRecord): void {
  try {
    const records = [record, ...readVerifiedRecords(cacheFile).filter((other) => other?.file !== record.file)].slice(0, MAX_VERIFIED_RECORDS);
    fs.mkdirSync(path.dirname(cacheFile), { recursive: true, mode: 0o700 });
    const temp = `${cacheFile}.${process.pid}.tmp`;
    fs.writeFileSync(temp, JSON.stringify({ records }), { mode: 0o600 });
    fs.renameSync(temp, cacheFile);
  } catch {
    // Only a speed-up: the next process hashes the file again.
  }
}

/**
 * SHA-256 of a file, streamed; remembered (in memory, and in `cacheFile` when given) until the
 * file's size, mtime, inode or ctime change. Rewriting the binary always changes its ctime,
 * which no unprivileged process can set back. (Code running as the same user could also edit
 * the record, but it could as well edit Ward itself: DESIGN's same-UID residual risk.)
 */
export async function sha256OfFile(file: string, cacheFile?: string): Promise<string> {
  const before = fingerprintOf(file);
  const cached = hashCache.get(file);
  if (cached !== undefined && sameFileIdentity(cached.fingerprint, before)) return cached.sha256;
  const remembered = verifiedHash(readVerifiedRecords(cacheFile), file, before);
  if (remembered !== undefined) {
    hashCache.set(file, { fingerprint: before, sha256: remembered });
    return remembered;
  }
  // Two checks at once (`ward run`'s head start and its preflight) read the file once.
  const key = `${file}\n${JSON.stringify(before)}`;
  let reading = hashing.get(key);
  if (reading === undefined) {
    reading = hashFile(file, before, cacheFile).finally(() => hashing.delete(key));
    hashing.set(key, reading);
  }
  return reading;
}

const hashing = new Map<string, Promise<string>>();

async function hashFile(file: string, before: Fingerprint, cacheFile: string | undefined): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of fs.createReadStream(file, { highWaterMark: 1024 * 1024 })) hash.update(chunk as Buffer);
  const sha256 = hash.digest('hex');
  // A file that changed while it was read is not cached: the next check reads it again.
  if (sameFileIdentity(before, fingerprintOf(file))) {
    hashCache.set(file, { fingerprint: before, sha256 });
    if (cacheFile !== undefined) writeVerifiedRecord(cacheFile, { file, fingerprint: before, sha256 });
  }
  return sha256;
}

/**
 * R1: resolves and verifies the pinned CLI. Throws WardError('cli_pin_mismatch') with a message
 * that says what differs; callers must not spawn anything then.
 */
export async function verifyPinnedCli(location: PinLocation = {}): Promise<PinnedCli> {
  const pin = location.pin ?? COMMITTED_PIN;
  const key = location.platformKey ?? platformKey();
  const expectedVersion = location.expectedVersion ?? expectedCliVersion().version;
  if (pin.version !== expectedVersion) {
    throw new WardError('cli_pin_mismatch', `cli-pin.json pins ${CLI_PACKAGE} ${pin.version} but package.json depends on ${expectedVersion}; update the pin after checking the new version`);
  }
  const expectedHash = pin.sha256[key];
  if (expectedHash === undefined) throw new WardError('cli_pin_mismatch', `no pinned SHA-256 for platform ${key} in cli-pin.json; Ward does not run an unverified CLI`);
  let binary = location.binaryPath;
  if (binary === undefined) {
    const located = locatePlatformBinary(key);
    binary = located.binary;
    const installed = (JSON.parse(fs.readFileSync(located.packageJson, 'utf8')) as { version?: string }).version;
    if (installed !== expectedVersion) {
      throw new WardError('cli_pin_mismatch', `installed ${CLI_PACKAGE}-${key} is ${String(installed)}, pinned ${expectedVersion}; run "npm ci" in the Ward folder`);
    }
  }
  if (!fs.existsSync(binary)) throw new WardError('cli_pin_mismatch', `the pinned CLI binary is missing at ${binary}; run "npm ci" in the Ward folder`);
  const actual = await sha256OfFile(binary, location.verifiedCacheFile);
  if (actual !== expectedHash) {
    throw new WardError('cli_pin_mismatch', `the CLI at ${binary} has SHA-256 ${actual}, pinned ${expectedHash}; refusing to run it`);
  }
  return { path: binary, version: expectedVersion, sha256: actual, platformKey: key };
}
