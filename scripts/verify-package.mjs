// Checks a packaged Ward before it ships:  node scripts/verify-package.mjs APP_DIR
//   APP_DIR: release/mac-arm64/Ward.app (or mac/), release/win-unpacked, release/linux-unpacked
// 1. the Electron fuses, read back from the binary with @electron/fuses, are the ones
//    electron-builder.yml sets (a test keeps the two lists equal);
// 2. app.asar: every file matches the integrity hash in its header, and on macOS the header
//    matches Info.plist's ElectronAsarIntegrity (what Electron checks at start);
// 3. the pinned Claude CLI in app.asar.unpacked has the SHA-256 main/runner/cli-pin.json pins
//    (R1), and the Electron builds of the native modules are there;
// 4. code signatures, where this OS has a tool for them (codesign, Get-AuthenticodeSignature).
// Prints one line per check and exits 1 if any fails.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, readSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { FuseV1Options, getCurrentFuseWire } from '@electron/fuses';
import { parse as parsePlist } from 'plist';

/** What electron-builder.yml's electronFuses sets, by @electron/fuses' names. */
export const EXPECTED_FUSES = {
  RunAsNode: false,
  EnableCookieEncryption: true,
  EnableNodeOptionsEnvironmentVariable: false,
  EnableNodeCliInspectArguments: false,
  EnableEmbeddedAsarIntegrityValidation: true,
  OnlyLoadAppFromAsar: true,
  LoadBrowserProcessSpecificV8Snapshot: false,
  GrantFileProtocolExtraPrivileges: false,
};

const EXECUTABLES = ['Ward.exe', 'ward-desktop'];
/** A fuse's byte in the wire: ASCII '1' on, '0' off (@electron/fuses 1.x does not export these). */
const FUSE_ON = 0x31;
const FUSE_OFF = 0x30;
const NATIVE_FILES = ['better-sqlite3/build/Release/better_sqlite3.node', 'keytar/build/Release/keytar.node'];
const ROOT = path.resolve(import.meta.dirname, '..');

/** Where the binary holding the fuses and the resources folder are, per OS layout. */
export function locateApp(appDir) {
  if (appDir.endsWith('.app')) return { kind: 'mac', fuseTarget: appDir, resources: path.join(appDir, 'Contents', 'Resources') };
  const executable = EXECUTABLES.map((name) => path.join(appDir, name)).find((file) => existsSync(file));
  if (executable === undefined) throw new Error(`${appDir} holds none of ${EXECUTABLES.join(', ')}: give the unpacked app folder (release/win-unpacked, release/linux-unpacked) or the .app`);
  return { kind: executable.endsWith('.exe') ? 'win' : 'linux', fuseTarget: executable, resources: path.join(appDir, 'resources') };
}

export async function checkFuses(fuseTarget) {
  const wire = await getCurrentFuseWire(fuseTarget);
  return Object.entries(EXPECTED_FUSES).map(([name, want]) => {
    const state = wire[FuseV1Options[name]];
    const ok = state === (want ? FUSE_ON : FUSE_OFF);
    const shown = state === FUSE_ON ? 'on' : state === FUSE_OFF ? 'off' : state === undefined ? 'absent' : `state ${state}`;
    return { ok, what: `fuse ${name} is ${shown}${ok ? '' : `, expected ${want ? 'on' : 'off'}`}` };
  });
}

/** The asar header (Chromium Pickle framing) and where file contents start. */
export function readAsarHeader(file) {
  const fd = openSync(file, 'r');
  try {
    const sizes = Buffer.alloc(8);
    readSync(fd, sizes, 0, 8, 0);
    const headerPickleSize = sizes.readUInt32LE(4);
    const pickle = Buffer.alloc(headerPickleSize);
    readSync(fd, pickle, 0, headerPickleSize, 8);
    const length = pickle.readUInt32LE(4);
    const text = pickle.subarray(8, 8 + length).toString('utf8');
    return { text, header: JSON.parse(text), dataOffset: 8 + headerPickleSize };
  } finally {
    closeSync(fd);
  }
}

function* asarFiles(node, prefix = '') {
  for (const [name, entry] of Object.entries(node.files ?? {})) {
    const at = prefix === '' ? name : `${prefix}/${name}`;
    if (entry.files !== undefined) yield* asarFiles(entry, at);
    else if (entry.link === undefined) yield [at, entry];
  }
}

export function checkAsar(resources, kind) {
  const asar = path.join(resources, 'app.asar');
  if (!existsSync(asar)) return [{ ok: false, what: `${asar} is missing` }];
  const { text, header, dataOffset } = readAsarHeader(asar);
  const results = [];
  const bytes = readFileSync(asar);
  let checked = 0;
  const bad = [];
  for (const [name, entry] of asarFiles(header)) {
    if (entry.unpacked) continue;
    if (entry.integrity === undefined) {
      bad.push(`${name} (no integrity hash)`);
      continue;
    }
    const start = dataOffset + Number(entry.offset);
    const hash = createHash('sha256').update(bytes.subarray(start, start + entry.size)).digest('hex');
    if (hash !== entry.integrity.hash) bad.push(name);
    checked++;
  }
  results.push({ ok: bad.length === 0 && checked > 0, what: bad.length === 0 ? `app.asar: ${checked} files match their integrity hashes` : `app.asar: contents differ from the header for ${bad.slice(0, 5).join(', ')}` });
  if (kind === 'mac') {
    const info = parsePlist(readFileSync(path.join(resources, '..', 'Info.plist'), 'utf8'));
    const recorded = info.ElectronAsarIntegrity?.['Resources/app.asar']?.hash;
    const actual = createHash('sha256').update(text).digest('hex');
    results.push({ ok: recorded === actual, what: recorded === actual ? 'Info.plist ElectronAsarIntegrity matches the app.asar header' : `Info.plist ElectronAsarIntegrity ${recorded ?? '(absent)'} does not match the app.asar header (${actual})` });
  }
  return results;
}

export function checkCliPin(resources, pinFile = path.join(ROOT, 'main', 'runner', 'cli-pin.json')) {
  const pin = JSON.parse(readFileSync(pinFile, 'utf8'));
  const scope = path.join(resources, 'app.asar.unpacked', 'node_modules', '@anthropic-ai');
  const platformPackages = existsSync(scope) ? readdirSync(scope).filter((name) => name.startsWith('claude-code-')) : [];
  if (platformPackages.length !== 1) return [{ ok: false, what: `expected one pinned CLI platform package in ${scope}, found ${platformPackages.join(', ') || 'none'}` }];
  const key = platformPackages[0].slice('claude-code-'.length);
  const dir = path.join(scope, platformPackages[0]);
  const binary = [path.join(dir, 'claude'), path.join(dir, 'claude.exe')].find((file) => existsSync(file));
  const results = [];
  if (binary === undefined) return [{ ok: false, what: `no claude binary in ${dir}` }];
  const sha256 = createHash('sha256').update(readFileSync(binary)).digest('hex');
  results.push({ ok: sha256 === pin.sha256[key], what: sha256 === pin.sha256[key] ? `pinned CLI ${pin.version} (${key}) matches cli-pin.json` : `pinned CLI ${binary} has SHA-256 ${sha256}, cli-pin.json pins ${pin.sha256[key] ?? 'nothing'} for ${key} (R1: Ward would refuse every run)` });
  const version = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')).version;
  results.push({ ok: version === pin.version, what: `pinned CLI package version ${version}${version === pin.version ? '' : `, cli-pin.json says ${pin.version}`}` });
  for (const native of NATIVE_FILES) {
    const file = path.join(resources, 'app.asar.unpacked', 'dist', 'electron', 'node_modules', native);
    results.push({ ok: existsSync(file) && statSync(file).size > 0, what: `Electron build of ${native.split('/')[0]} ${existsSync(file) ? 'is unpacked' : 'is missing'}` });
  }
  return results;
}

function run(command, args) {
  const result = spawnSync(command, args, { encoding: 'utf8', timeout: 120_000 });
  return { ok: result.status === 0, output: `${result.stdout ?? ''}${result.stderr ?? ''}`.trim() || String(result.error ?? '') };
}

export function checkSignatures(appDir, location, platform = process.platform) {
  const cli = (ext) => {
    const scope = path.join(location.resources, 'app.asar.unpacked', 'node_modules', '@anthropic-ai');
    const name = existsSync(scope) ? readdirSync(scope).find((entry) => entry.startsWith('claude-code-')) : undefined;
    return name === undefined ? null : path.join(scope, name, `claude${ext}`);
  };
  if (location.kind === 'mac' && platform === 'darwin') {
    const app = run('codesign', ['--verify', '--deep', '--strict', '--verbose=2', appDir]);
    const claude = cli('');
    const anthropic = claude === null ? { ok: false, output: 'no CLI' } : run('codesign', ['--display', '--verbose=2', claude]);
    return [
      { ok: app.ok, what: `codesign --verify --deep --strict: ${app.ok ? 'valid' : app.output}` },
      { ok: anthropic.ok && /Authority=Developer ID Application: Anthropic/.test(anthropic.output), what: `pinned CLI keeps Anthropic's signature: ${(/Authority=Developer ID Application: [^\n]*/.exec(anthropic.output) ?? [anthropic.output])[0]}` },
    ];
  }
  if (location.kind === 'win' && platform === 'win32') {
    const status = (file) => run('powershell.exe', ['-NoProfile', '-NonInteractive', '-Command', `(Get-AuthenticodeSignature -LiteralPath '${file.replaceAll("'", "''")}') | ForEach-Object { $_.Status.ToString() + ' ' + $_.SignerCertificate.Subject }`]);
    const app = status(location.fuseTarget);
    const claude = cli('.exe');
    const anthropic = claude === null ? { ok: false, output: 'no CLI' } : status(claude);
    return [
      { ok: app.ok && app.output.startsWith('Valid'), what: `Ward.exe signature: ${app.output}` },
      { ok: anthropic.ok && /^Valid .*Anthropic/.test(anthropic.output), what: `pinned CLI keeps Anthropic's signature: ${anthropic.output}` },
    ];
  }
  return [{ ok: true, skipped: true, what: `code signature: no tool for ${location.kind} packages on ${platform} (Linux packages are signed by the repository that serves them)` }];
}

export async function verifyPackage(appDir) {
  const location = locateApp(appDir);
  return [...(await checkFuses(location.fuseTarget)), ...checkAsar(location.resources, location.kind), ...checkCliPin(location.resources), ...checkSignatures(appDir, location)];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const appDir = process.argv[2];
  if (appDir === undefined) {
    console.error('usage: node scripts/verify-package.mjs APP_DIR   (release/linux-unpacked, release/win-unpacked or release/mac*/Ward.app)');
    process.exit(2);
  }
  try {
    const results = await verifyPackage(path.resolve(appDir));
    for (const result of results) console.log(`${result.skipped ? 'skip' : result.ok ? 'ok  ' : 'FAIL'}  ${result.what}`);
    process.exit(results.every((result) => result.ok) ? 0 : 1);
  } catch (error) {
    console.error(`verify-package: ${error.message}`);
    process.exit(1);
  }
}
