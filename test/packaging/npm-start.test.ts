/**
 * `npm start` on a fresh checkout: Electron downloads its binary on first use. When that download
 * cannot happen, the start script says what happened and what to do, exits 1, and prints no stack
 * trace (issue 16 #1). The checkout is a copy whose Electron package has no binary, so the test
 * means the same on a machine where this checkout's Electron was already downloaded.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/ward-cli.js';
import { tempDir } from '../support/temp.js';

const ELECTRON_DIR = path.join(REPO_ROOT, 'node_modules', 'electron');
const VERSION = (JSON.parse(fs.readFileSync(path.join(ELECTRON_DIR, 'package.json'), 'utf8')) as { version: string }).version;
const ZIP = `electron-v${VERSION}-${process.platform}-${process.arch}.zip`;

/**
 * A checkout as `npm ci` leaves it before the first start: the start scripts and package.json
 * copied, every dependency linked, and an Electron package without its downloaded binary.
 */
function freshCheckout(): string {
  const root = tempDir('ward-fresh-');
  fs.mkdirSync(path.join(root, 'scripts'));
  for (const script of ['start-desktop.mjs', 'electron-binary.mjs', 'electron-natives.mjs']) fs.copyFileSync(path.join(REPO_ROOT, 'scripts', script), path.join(root, 'scripts', script));
  fs.copyFileSync(path.join(REPO_ROOT, 'package.json'), path.join(root, 'package.json'));
  const modules = path.join(root, 'node_modules');
  fs.mkdirSync(modules);
  for (const entry of fs.readdirSync(path.join(REPO_ROOT, 'node_modules'))) {
    if (entry !== 'electron') fs.symlinkSync(path.join(REPO_ROOT, 'node_modules', entry), path.join(modules, entry));
  }
  const electron = path.join(modules, 'electron');
  fs.mkdirSync(electron);
  for (const entry of fs.readdirSync(ELECTRON_DIR)) {
    const from = path.join(ELECTRON_DIR, entry);
    if (entry === 'dist' || entry === 'path.txt') continue;
    if (fs.statSync(from).isDirectory()) fs.symlinkSync(from, path.join(electron, entry));
    else fs.copyFileSync(from, path.join(electron, entry));
  }
  return root;
}

function npmStart(env: NodeJS.ProcessEnv) {
  const root = freshCheckout();
  return spawnSync(process.execPath, [path.join(root, 'scripts', 'start-desktop.mjs')], { cwd: root, env: { PATH: process.env.PATH, HOME: tempDir(), ...env }, encoding: 'utf8', timeout: 60_000 });
}

const STACK_LINE = /^\s+at .+[:(]/m;

describe('npm start without the Electron binary', () => {
  it('test_a_failed_first_download_says_what_happened_and_every_way_out_exits_1_and_prints_no_stack', () => {
    const cache = tempDir();
    // A mirror nothing answers on: the download fails here whether or not this machine has network.
    const result = npmStart({ ELECTRON_MIRROR: 'http://127.0.0.1:9/', electron_config_cache: cache });
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    const lines = result.stderr.split('\n');
    expect(lines[0]).toBe(`npm start: Electron ${VERSION}'s binary is not installed yet (Electron downloads it on first use, not at npm ci); downloading it once (about 100 MB) from http://127.0.0.1:9/v${VERSION}/${ZIP} ...`);
    expect(lines[1]).toMatch(new RegExp(`^npm start: could not download Electron ${VERSION.replaceAll('.', '\\.')}'s binary: .+\\. The first npm start needs network access`));
    expect(result.stderr).toContain('run npm start again where http://127.0.0.1:9 is reachable');
    // The cache folder @electron/get reads (checked in scripts/electron-binary.mjs against its Cache class).
    expect(result.stderr).toMatch(new RegExp(`copy it to\\n +${cache.replaceAll('/', '\\/')}\\/[0-9a-f]{64}\\/${ZIP.replaceAll('.', '\\.')}\\n`));
    expect(result.stderr).toContain('ELECTRON_OVERRIDE_DIST_PATH=/that/folder npm start');
    expect(result.stderr).toContain('The headless "ward" command needs no Electron and works now.');
    expect(result.stderr).not.toMatch(STACK_LINE);
    // Not the advice to run npm ci again, which installs the same package without the binary.
    expect(result.stderr).not.toMatch(/run "?npm ci/);
  });

  it('test_electron_override_dist_path_naming_a_folder_without_electron_is_refused_with_the_fix', () => {
    const folder = tempDir();
    const result = npmStart({ ELECTRON_OVERRIDE_DIST_PATH: folder });
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(`npm start: ELECTRON_OVERRIDE_DIST_PATH is ${folder}, but there is no Electron executable at ${path.join(folder, process.platform === 'darwin' ? 'Electron.app/Contents/MacOS/Electron' : process.platform === 'win32' ? 'electron.exe' : 'electron')}: unzip ${ZIP} (Electron ${VERSION}) into that folder, or unset the variable.\n`);
  });
});
