// Electron-ABI builds of the native modules, for `npm start` and `npm run dist` alike.
//
// better-sqlite3 and keytar in ./node_modules are built for Node (the `ward` command and the
// tests use them). Electron needs builds for its own ABI. Rebuilding them in place would break
// the CLI, so the Electron builds live in dist/electron/node_modules, which Node's resolution
// finds first from dist/electron/main.js (scripts/build.mjs builds that entry without shared
// chunks). They are rebuilt only when the Electron version changes.
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

export const NATIVE_MODULES = ['better-sqlite3', 'keytar'];

/** Builds them once per Electron version into ROOT/dist/electron/node_modules; ./node_modules is only read. */
export async function prepareElectronNatives(root, electronVersion, log = console.error) {
  const require = createRequire(path.join(root, 'package.json'));
  const appDir = path.join(root, 'dist', 'electron');
  const stamp = path.join(appDir, 'node_modules', '.ward-electron-version');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === electronVersion) return;
  log(`building ${NATIVE_MODULES.join(' and ')} for Electron ${electronVersion} in dist/electron/node_modules (once per Electron version)...`);
  rmSync(path.join(appDir, 'node_modules'), { recursive: true, force: true });
  mkdirSync(path.join(appDir, 'node_modules'), { recursive: true });
  const dependencies = {};
  for (const name of NATIVE_MODULES) {
    const source = path.dirname(require.resolve(`${name}/package.json`));
    cpSync(source, path.join(appDir, 'node_modules', name), { recursive: true });
    dependencies[name] = JSON.parse(readFileSync(path.join(source, 'package.json'), 'utf8')).version;
  }
  writeFileSync(path.join(appDir, 'package.json'), `${JSON.stringify({ name: 'ward-electron-natives', private: true, type: 'module', dependencies }, null, 2)}\n`);
  const { rebuild } = await import('@electron/rebuild');
  await rebuild({ buildPath: appDir, electronVersion, onlyModules: NATIVE_MODULES, force: true });
  writeFileSync(stamp, electronVersion);
}
