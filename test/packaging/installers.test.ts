/**
 * `npm run dist` cannot run here (Electron's release archive cannot be downloaded), so this
 * checks what can be checked without it: the installer config against electron-builder's own
 * schema, the choices in it, that packaging fails early and changes nothing when Electron
 * cannot be fetched, and scripts/verify-package.mjs on crafted app folders.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/ward-cli.js';
import { tempDir } from '../support/temp.js';

const require = createRequire(path.join(REPO_ROOT, 'package.json'));
// electron-builder's own loader and validator, as `electron-builder` runs them.
/** The parts of the loaded config this file looks at. */
interface BuilderConfig {
  readonly npmRebuild: boolean;
  readonly electronFuses: Record<string, boolean>;
  readonly mac: { readonly hardenedRuntime: boolean; readonly notarize: boolean; readonly entitlements: string; readonly target: readonly { target: string }[] };
  readonly win: { readonly target: readonly { target: string }[]; readonly signExts: readonly string[] };
  readonly msi: { readonly perMachine: boolean };
  readonly linux: { readonly target: readonly string[]; readonly maintainer: string };
  readonly deb: { readonly depends: readonly string[] };
  readonly rpm: { readonly depends: readonly string[] };
}
const { getConfig, validateConfiguration } = require('app-builder-lib/out/util/config/config.js') as {
  getConfig(projectDir: string, configPath: string | null, configFromOptions: unknown): Promise<BuilderConfig>;
  validateConfiguration(config: unknown, debugLogger: { isEnabled: boolean; add(): void }): Promise<void>;
};
const verify = await import('../../scripts/verify-package.mjs');

async function builderConfig(): Promise<BuilderConfig> {
  return getConfig(REPO_ROOT, path.join(REPO_ROOT, 'electron-builder.yml'), null);
}

describe('installers (electron-builder.yml)', () => {
  it('test_the_config_validates_against_electron_builders_own_schema', async () => {
    const config = await builderConfig();
    await validateConfiguration(config, { isEnabled: false, add: () => undefined });
    // The validator is real: a misplaced option is refused.
    await expect(validateConfiguration({ ...config, mac: { ...config.mac, notarise: true } }, { isEnabled: false, add: () => undefined })).rejects.toThrow(/^Invalid configuration object. electron-builder [0-9.]+ has been initialized using a configuration object that does not match the API schema.\n - configuration.mac /);
  });

  it('test_fuses_signing_targets_and_package_dependencies_are_what_a_security_focused_app_ships', async () => {
    const config = await builderConfig();
    const { resetAdHocDarwinSignature, ...fuses } = config.electronFuses;
    expect(resetAdHocDarwinSignature).toBe(true);
    // verify-package reads back exactly these, by @electron/fuses' names.
    expect(Object.fromEntries(Object.entries(fuses).map(([name, value]) => [name[0]!.toUpperCase() + name.slice(1), value]))).toEqual(verify.EXPECTED_FUSES);
    expect(fuses.grantFileProtocolExtraPrivileges).toBe(false);
    expect(config.npmRebuild).toBe(false);
    expect(config.mac).toMatchObject({ hardenedRuntime: true, notarize: true, entitlements: 'build-resources/entitlements.mac.plist' });
    expect(config.mac.target.map((target) => target.target)).toEqual(['dmg', 'zip']);
    expect(config.win.target.map((target) => target.target)).toEqual(['nsis', 'msi']);
    expect(config.win.signExts).toEqual(['!claude.exe']);
    expect(config.msi.perMachine).toBe(true);
    expect(config.linux.target).toEqual(['AppImage', 'deb', 'rpm']);
    for (const needed of ['bubblewrap', 'socat', 'ripgrep']) {
      expect(config.deb.depends).toContain(needed);
      expect(config.rpm.depends).toContain(needed);
    }
    expect(config.deb.depends).toContain('libsecret-1-0');
    expect(config.rpm.depends).toContain('libsecret');
    expect(config.linux.maintainer).toMatch(/^.+ <.+@.+>$/);
    expect(JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')).author).toMatch(/^.+ <.+@.+>$/);
    // Entitlements: only JIT.
    const entitlements = fs.readFileSync(path.join(REPO_ROOT, 'build-resources', 'entitlements.mac.plist'), 'utf8');
    expect([...entitlements.matchAll(/<key>([^<]+)<\/key>/g)].map((match) => match[1])).toEqual(['com.apple.security.cs.allow-jit']);
    // The output folder is not committed.
    expect(spawnSync('git', ['check-ignore', '-q', 'release/Ward.AppImage'], { cwd: REPO_ROOT }).status).toBe(0);
  });

  it('test_packaging_fails_early_and_clearly_when_electron_cannot_be_fetched_and_changes_nothing', () => {
    const nativeBuild = path.join(REPO_ROOT, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
    const before = fs.statSync(nativeBuild).mtimeMs;
    const result = spawnSync(process.execPath, [path.join(REPO_ROOT, 'scripts', 'dist.mjs')], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      timeout: 60_000,
      // A mirror nothing listens on, and an empty cache: the fetch fails at once, offline or not.
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ELECTRON_MIRROR: 'http://127.0.0.1:9/', electron_config_cache: tempDir('electron-cache-') },
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`npm run dist: Electron 45.5.0 for ${process.platform}-${process.arch} could not be fetched`);
    expect(result.stderr).toContain('Nothing was built or changed.');
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(fs.statSync(nativeBuild).mtimeMs).toBe(before);
  });
});

/** An asar archive as electron-builder writes it: Pickle-framed JSON header with per-file SHA-256. */
function writeAsar(file: string, files: Record<string, string>): void {
  let offset = 0;
  const entries: Record<string, unknown> = {};
  const bodies: Buffer[] = [];
  for (const [name, text] of Object.entries(files)) {
    const body = Buffer.from(text);
    const hash = createHash('sha256').update(body).digest('hex');
    entries[name] = { size: body.length, offset: String(offset), integrity: { algorithm: 'SHA256', hash, blockSize: 4 * 1024 * 1024, blocks: [hash] } };
    bodies.push(body);
    offset += body.length;
  }
  const json = Buffer.from(JSON.stringify({ files: entries }));
  const padded = Buffer.concat([json, Buffer.alloc((4 - (json.length % 4)) % 4)]);
  const payload = Buffer.concat([Buffer.from(Uint32Array.of(json.length).buffer), padded]);
  const headerPickle = Buffer.concat([Buffer.from(Uint32Array.of(payload.length).buffer), payload]);
  fs.writeFileSync(file, Buffer.concat([Buffer.from(Uint32Array.of(4, headerPickle.length).buffer), headerPickle, ...bodies]));
}

const SENTINEL = 'dL7pKGdnNz796PbbjQWNKmHXBZaB9tsX';

/** release/linux-unpacked as electron-builder lays it out, with an executable carrying a fuse wire. */
function craftedLinuxApp(fuses: string): string {
  const app = tempDir('ward-unpacked-');
  fs.writeFileSync(path.join(app, 'ward-desktop'), Buffer.concat([Buffer.from('\x7fELF...electron...'), Buffer.from(SENTINEL), Buffer.from([1, fuses.length]), Buffer.from(fuses), Buffer.from('...rest')]), { mode: 0o755 });
  const resources = path.join(app, 'resources');
  fs.mkdirSync(resources);
  writeAsar(path.join(resources, 'app.asar'), { 'package.json': '{"name":"ward"}', 'main.js': 'console.log("ward")' });
  const cliDir = path.join(resources, 'app.asar.unpacked', 'node_modules', '@anthropic-ai', 'claude-code-linux-x64');
  fs.mkdirSync(cliDir, { recursive: true });
  const installed = path.dirname(require.resolve('@anthropic-ai/claude-code-linux-x64/package.json'));
  fs.symlinkSync(path.join(installed, 'claude'), path.join(cliDir, 'claude'));
  fs.copyFileSync(path.join(installed, 'package.json'), path.join(cliDir, 'package.json'));
  for (const native of ['better-sqlite3/build/Release/better_sqlite3.node', 'keytar/build/Release/keytar.node']) {
    const file = path.join(resources, 'app.asar.unpacked', 'dist', 'electron', 'node_modules', native);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, 'native');
  }
  return app;
}

// RunAsNode off, cookie encryption on, NODE_OPTIONS off, inspect off, asar integrity on, asar only on, V8 snapshot off, file:// privileges off.
const GOOD_FUSES = '01001100';

describe('scripts/verify-package.mjs on crafted app folders', () => {
  it('test_a_folder_laid_out_like_a_good_build_passes_every_check', async () => {
    const results = await verify.verifyPackage(craftedLinuxApp(GOOD_FUSES));
    expect(results.filter((result) => !result.ok)).toEqual([]);
    expect(results.map((result) => result.what)).toEqual(
      expect.arrayContaining(['fuse GrantFileProtocolExtraPrivileges is off', 'app.asar: 2 files match their integrity hashes', 'pinned CLI 2.1.328 (linux-x64) matches cli-pin.json', expect.stringMatching(/^code signature: no tool for linux packages/)]),
    );
  });

  it('test_a_wrong_fuse_a_changed_asar_and_a_resigned_cli_each_fail_naming_what', async () => {
    const runAsNode = await verify.verifyPackage(craftedLinuxApp(`1${GOOD_FUSES.slice(1)}`));
    expect(runAsNode.filter((result) => !result.ok).map((result) => result.what)).toEqual(['fuse RunAsNode is on, expected off']);

    const app = craftedLinuxApp(GOOD_FUSES);
    const asar = path.join(app, 'resources', 'app.asar');
    const bytes = fs.readFileSync(asar);
    bytes[bytes.length - 2] = 'X'.charCodeAt(0);
    fs.writeFileSync(asar, bytes);
    const cli = path.join(app, 'resources', 'app.asar.unpacked', 'node_modules', '@anthropic-ai', 'claude-code-linux-x64', 'claude');
    fs.unlinkSync(cli);
    fs.writeFileSync(cli, 'a binary signed again');
    const failures = (await verify.verifyPackage(app)).filter((result) => !result.ok).map((result) => result.what);
    expect(failures).toEqual(['app.asar: contents differ from the header for main.js', expect.stringMatching(/^pinned CLI .* has SHA-256 [0-9a-f]{64}, cli-pin.json pins a982d380.* for linux-x64 \(R1: Ward would refuse every run\)$/)]);
  });

  it('test_a_folder_that_is_not_an_unpacked_app_is_refused_with_what_to_give', () => {
    expect(() => verify.locateApp(tempDir())).toThrow(/holds none of Ward.exe, ward-desktop: give the unpacked app folder/);
  });
});
