// `npm start`: builds Ward, prepares Electron-ABI builds of the native modules, launches Electron.
//
// better-sqlite3 and keytar in ./node_modules are built for Node (the `ward` command and the
// tests use them). Electron needs builds for its own ABI. Rebuilding them in place would break
// the CLI, so the Electron builds live in dist/electron/node_modules, which Node's resolution
// finds first from dist/electron/main.js (scripts/build.mjs builds that entry without shared
// chunks). They are rebuilt only when the Electron version changes.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const NATIVE_MODULES = ['better-sqlite3', 'keytar'];
const root = path.resolve(import.meta.dirname, '..');
const require = createRequire(path.join(root, 'package.json'));

const built = spawnSync(process.execPath, [path.join(root, 'scripts', 'build.mjs'), 'all'], { stdio: 'inherit', cwd: root });
if (built.status !== 0) process.exit(built.status ?? 1);

let electronBinary;
try {
  electronBinary = require('electron'); // the package's main export is the binary's path
} catch {
  electronBinary = undefined;
}
if (typeof electronBinary !== 'string' || !existsSync(electronBinary)) {
  console.error('npm start: the Electron binary is not installed (was npm ci run with ELECTRON_SKIP_BINARY_DOWNLOAD=1?). Run "npm ci" on a machine that can download Electron, or use the headless "npx ward".');
  process.exit(1);
}
const electronVersion = JSON.parse(readFileSync(require.resolve('electron/package.json'), 'utf8')).version;

const appDir = path.join(root, 'dist', 'electron');
const stamp = path.join(appDir, 'node_modules', '.ward-electron-version');
if (!existsSync(stamp) || readFileSync(stamp, 'utf8') !== electronVersion) {
  console.error(`npm start: building ${NATIVE_MODULES.join(' and ')} for Electron ${electronVersion} (once per Electron version)...`);
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

const child = spawn(electronBinary, [root, ...process.argv.slice(2)], { stdio: 'inherit', cwd: root });
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
