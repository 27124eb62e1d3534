// `npm run dist`: installers for this OS (electron-builder.yml), in this order so nothing is
// left half-done:
//   1. fetch Electron's release archive for this platform (electron-builder packs it), failing
//      early, with what to do, when it cannot be fetched: nothing has been changed by then;
//   2. build Ward, and Electron-ABI builds of the native modules in dist/electron/node_modules
//      (./node_modules, which the ward CLI and the tests use, is only read: npmRebuild is off);
//   3. run electron-builder with signing read from the environment:
//      macOS  CSC_LINK/CSC_KEY_PASSWORD (Developer ID), APPLE_API_KEY/APPLE_API_KEY_ID/
//             APPLE_API_ISSUER (notarization with an App Store Connect API key);
//      Windows WARD_AZURE_ENDPOINT, WARD_AZURE_SIGNING_ACCOUNT, WARD_AZURE_CERT_PROFILE,
//             WARD_AZURE_PUBLISHER (Azure Trusted Signing; credentials in AZURE_TENANT_ID,
//             AZURE_CLIENT_ID, AZURE_CLIENT_SECRET as Azure's EnvironmentCredential reads them).
// Then check the result: node scripts/verify-package.mjs release/<platform>-unpacked (or the .app).
// Extra arguments go to electron-builder (e.g. --linux deb).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { prepareElectronNatives } from './electron-natives.mjs';

const FETCH_TIMEOUT_MS = 5 * 60_000;
const root = path.resolve(import.meta.dirname, '..');
const require = createRequire(path.join(root, 'package.json'));
const say = (line) => console.error(`npm run dist: ${line}`);
const electronVersion = JSON.parse(readFileSync(require.resolve('electron/package.json'), 'utf8')).version;

/** Step 1: the archive electron-builder will pack, into @electron/get's cache (which electron-builder reads). */
async function fetchElectron() {
  const { downloadArtifact } = await import('@electron/get');
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${FETCH_TIMEOUT_MS / 60_000} minutes`)), FETCH_TIMEOUT_MS);
  });
  try {
    return await Promise.race([downloadArtifact({ version: electronVersion, artifactName: 'electron', platform: process.platform, arch: process.arch, checksums: require('electron/checksums.json') }), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

try {
  say(`fetching Electron ${electronVersion} for ${process.platform}-${process.arch} (from the cache when it is there)...`);
  await fetchElectron();
} catch (error) {
  const reason = String(error?.cause?.message ?? error?.message ?? error).split('\n')[0];
  say(`Electron ${electronVersion} for ${process.platform}-${process.arch} could not be fetched: ${reason}.`);
  say('Packaging needs Electron\'s release archive. Run "npm run dist" where Electron\'s release downloads are reachable,');
  say(`or set ELECTRON_MIRROR to a mirror of them that is (it must serve v${electronVersion}/electron-v${electronVersion}-${process.platform}-${process.arch}.zip).`);
  say('Nothing was built or changed.');
  process.exit(1);
}

const built = spawnSync(process.execPath, [path.join(root, 'scripts', 'build.mjs'), 'all'], { stdio: 'inherit', cwd: root });
if (built.status !== 0) process.exit(built.status ?? 1);
await prepareElectronNatives(root, electronVersion, say);

const signing = [];
const azure = { endpoint: 'WARD_AZURE_ENDPOINT', codeSigningAccountName: 'WARD_AZURE_SIGNING_ACCOUNT', certificateProfileName: 'WARD_AZURE_CERT_PROFILE', publisherName: 'WARD_AZURE_PUBLISHER' };
if (Object.values(azure).every((name) => process.env[name])) {
  for (const [field, name] of Object.entries(azure)) signing.push(`-c.win.azureSignOptions.${field}=${process.env[name]}`);
} else if (process.platform === 'win32') {
  say('WARD_AZURE_* are not all set: the Windows installers will not be signed.');
}
if (process.platform === 'darwin' && !(process.env.APPLE_API_KEY && process.env.APPLE_API_KEY_ID && process.env.APPLE_API_ISSUER)) {
  say('APPLE_API_KEY, APPLE_API_KEY_ID and APPLE_API_ISSUER are not all set: the app will not be notarized.');
  signing.push('-c.mac.notarize=false');
}

const builder = spawnSync(process.execPath, [require.resolve('electron-builder/cli.js'), '--config', 'electron-builder.yml', ...signing, ...process.argv.slice(2)], { stdio: 'inherit', cwd: root });
if (builder.status !== 0) process.exit(builder.status ?? 1);
say('done: check each app with "node scripts/verify-package.mjs <the unpacked app in release/>" before you ship it.');
