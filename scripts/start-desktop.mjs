// `npm start`: builds Ward, prepares Electron-ABI builds of the native modules
// (scripts/electron-natives.mjs: never in ./node_modules, which the CLI uses), launches Electron.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { prepareElectronNatives } from './electron-natives.mjs';

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

await prepareElectronNatives(root, electronVersion, (line) => console.error(`npm start: ${line}`));

const child = spawn(electronBinary, [root, ...process.argv.slice(2)], { stdio: 'inherit', cwd: root });
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
