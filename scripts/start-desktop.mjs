// `npm start`: finds (or downloads, once) the Electron binary, builds Ward, prepares Electron-ABI
// builds of the native modules (scripts/electron-natives.mjs: never in ./node_modules, which the
// CLI uses), launches Electron.
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { ElectronMissing, ensureElectronBinary } from './electron-binary.mjs';
import { prepareElectronNatives } from './electron-natives.mjs';

const root = path.resolve(import.meta.dirname, '..');
const log = (line) => console.error(`npm start: ${line}`);

// First, before the build: a missing binary is the likeliest problem on a fresh checkout.
let electron;
try {
  electron = await ensureElectronBinary(root, log);
} catch (error) {
  if (!(error instanceof ElectronMissing)) throw error;
  log(error.message);
  process.exit(1);
}

const built = spawnSync(process.execPath, [path.join(root, 'scripts', 'build.mjs'), 'all'], { stdio: 'inherit', cwd: root });
if (built.status !== 0) process.exit(built.status ?? 1);

await prepareElectronNatives(root, electron.version, log);

const child = spawn(electron.binary, [root, ...process.argv.slice(2)], { stdio: 'inherit', cwd: root });
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
