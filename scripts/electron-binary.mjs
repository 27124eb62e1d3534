// Finds the Electron binary for `npm start`. Electron 45 downloads its binary on first use, not at
// `npm ci`: `require('electron')` would start that download itself and, offline, print a raw stack
// and advise running `npm ci` again, which does not help. Here the binary is looked for without
// side effects, downloaded with Electron's own installer when missing, and a failure says what
// happened and what to do, in a few lines.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** Electron's zip is about 100 MB; a download that takes longer than this is given up. */
const DOWNLOAD_TIMEOUT_MS = 20 * 60_000;
/** Where @electron/get downloads from unless ELECTRON_MIRROR names another place. */
const DEFAULT_MIRROR = 'https://github.com/electron/electron/releases/download/';

/** The binary is missing and could not be fetched; the message says what to do. */
export class ElectronMissing extends Error {}

/** The executable inside an unzipped Electron release, as node_modules/electron/install.js names it. */
function executableName() {
  if (process.platform === 'darwin') return 'Electron.app/Contents/MacOS/Electron';
  return process.platform === 'win32' ? 'electron.exe' : 'electron';
}

function locate(packageDir) {
  const pathFile = path.join(packageDir, 'path.txt');
  const name = existsSync(pathFile) ? readFileSync(pathFile, 'utf8').trim() : executableName();
  const override = process.env.ELECTRON_OVERRIDE_DIST_PATH;
  return override ? path.join(override, name) : path.join(packageDir, 'dist', name);
}

/**
 * Where @electron/get looks for the zip before downloading it: the cache root (env-paths'
 * "electron" cache folder, or electron_config_cache as install.js passes it), then the SHA-256 of
 * the download URL's folder (@electron/get's Cache.getCacheDirectory).
 */
async function cachedZipPath(packageDir, zipUrl, zipName) {
  let root = process.env.electron_config_cache;
  if (!root) {
    const get = createRequire(path.join(packageDir, 'install.js')).resolve('@electron/get');
    const envPaths = (await import(pathToFileURL(createRequire(get).resolve('env-paths')).href)).default;
    root = envPaths('electron', { suffix: '' }).cache;
  }
  const folder = new URL(zipUrl);
  folder.pathname = path.posix.dirname(folder.pathname);
  return path.join(root, createHash('sha256').update(folder.toString()).digest('hex'), zipName);
}

/** Returns the Electron binary and its version, downloading it first when it is missing; throws ElectronMissing. */
export async function ensureElectronBinary(root, log) {
  const require = createRequire(path.join(root, 'package.json'));
  const packageDir = path.dirname(require.resolve('electron/package.json'));
  const { version } = JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8'));
  if (existsSync(locate(packageDir))) return { binary: locate(packageDir), version };

  const zipName = `electron-v${version}-${process.platform}-${process.arch}.zip`;
  const override = process.env.ELECTRON_OVERRIDE_DIST_PATH;
  if (override) {
    throw new ElectronMissing(`ELECTRON_OVERRIDE_DIST_PATH is ${override}, but there is no Electron executable at ${locate(packageDir)}: unzip ${zipName} (Electron ${version}) into that folder, or unset the variable.`);
  }
  const mirror = process.env.ELECTRON_MIRROR || DEFAULT_MIRROR;
  const zipUrl = `${mirror}v${version}/${zipName}`;
  log(`Electron ${version}'s binary is not installed yet (Electron downloads it on first use, not at npm ci); downloading it once (about 100 MB) from ${zipUrl} ...`);
  const installed = spawnSync(process.execPath, [path.join(packageDir, 'install.js')], {
    cwd: packageDir,
    encoding: 'utf8',
    stdio: ['ignore', 'inherit', 'pipe'],
    timeout: DOWNLOAD_TIMEOUT_MS,
  });
  if (installed.status === 0 && existsSync(locate(packageDir))) return { binary: locate(packageDir), version };

  // install.js prints the error's stack; its first line is the reason, the rest is noise to a person.
  const reason = installed.error?.code === 'ETIMEDOUT' ? `no download within ${DOWNLOAD_TIMEOUT_MS / 60_000} minutes` : (installed.stderr ?? '').trim().split('\n')[0]?.replace(/^\w*Error: /, '') || `the installer exited with ${installed.status ?? installed.signal}`;
  throw new ElectronMissing(
    [
      `could not download Electron ${version}'s binary: ${reason}. The first npm start needs network access: Electron downloads its binary then, and building better-sqlite3 and keytar for Electron fetches Electron's headers.`,
      'To fix it, do one of:',
      `  - run npm start again where ${new URL(zipUrl).origin} is reachable (ELECTRON_MIRROR=URL names a mirror; ELECTRON_GET_USE_PROXY=1 uses HTTPS_PROXY);`,
      `  - download ${zipUrl} on another machine and copy it to`,
      `      ${await cachedZipPath(packageDir, zipUrl, zipName)}`,
      '    (Electron installs from there after checking its SHA-256), then run npm start again;',
      `  - unzip it into a folder and run ELECTRON_OVERRIDE_DIST_PATH=/that/folder npm start.`,
      'The headless "ward" command needs no Electron and works now.',
    ].join('\n'),
  );
}
