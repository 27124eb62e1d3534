/**
 * `npm start` on a checkout installed with ELECTRON_SKIP_BINARY_DOWNLOAD=1 (as .ci/run installs):
 * Electron downloads its binary on first use. When that download cannot happen, the start script
 * says what happened and what to do, exits 1, and prints no stack trace (issue 16 #1).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/ward-cli.js';
import { tempDir } from '../support/temp.js';

const START = path.join(REPO_ROOT, 'scripts', 'start-desktop.mjs');
const ELECTRON_DIR = path.join(REPO_ROOT, 'node_modules', 'electron');
const VERSION = (JSON.parse(fs.readFileSync(path.join(ELECTRON_DIR, 'package.json'), 'utf8')) as { version: string }).version;
const ZIP = `electron-v${VERSION}-${process.platform}-${process.arch}.zip`;

function npmStart(env: NodeJS.ProcessEnv) {
  return spawnSync(process.execPath, [START], { cwd: REPO_ROOT, env: { PATH: process.env.PATH, HOME: tempDir(), ...env }, encoding: 'utf8', timeout: 60_000 });
}

const STACK_LINE = /^\s+at .+[:(]/m;

describe('npm start without the Electron binary', () => {
  it('test_a_failed_first_download_says_what_happened_and_every_way_out_exits_1_and_prints_no_stack', () => {
    expect(fs.existsSync(path.join(ELECTRON_DIR, 'dist')), 'this test needs Electron installed without its binary (ELECTRON_SKIP_BINARY_DOWNLOAD=1 npm ci, as .ci/run does)').toBe(false);
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
    expect(result.stderr).toContain('The headless "npx ward" needs no Electron and works now.');
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
