// Runs a command with the services Ward's tests need and cleans them up afterwards:
// a private D-Bus session bus with an unlocked gnome-keyring (the real OS credential store).
// Everything started here dies with the dbus-run-session that owns it.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const command = process.argv.slice(2);
if (command.length === 0) {
  console.error('usage: node scripts/with-test-services.mjs COMMAND [ARGS...]');
  process.exit(2);
}

const have = (bin) => spawnSync('sh', ['-c', `command -v ${bin}`], { stdio: 'ignore' }).status === 0;
if (process.env.WARD_TEST_SERVICES_STARTED === '1') {
  run(command[0], command.slice(1));
} else if (have('dbus-run-session') && have('gnome-keyring-daemon')) {
  // Inside the private bus: unlock a fresh keyring with a throwaway password, then run the command.
  // The keyring files are this run's own: daemons of runs side by side that shared
  // ~/.local/share/keyrings reloaded each other's writes and lost secrets between processes.
  const keyrings = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-test-keyrings-'));
  const inner = 'printf "ward-test-keyring" | XDG_DATA_HOME="$WARD_TEST_KEYRINGS" gnome-keyring-daemon --unlock --components=secrets --daemonize >/dev/null && exec "$@"';
  run('dbus-run-session', ['--', 'sh', '-c', inner, 'sh', ...command], { WARD_TEST_SERVICES_STARTED: '1', WARD_TEST_KEYRINGS: keyrings }, () => fs.rmSync(keyrings, { recursive: true, force: true }));
} else {
  console.error('with-test-services: dbus-run-session and gnome-keyring-daemon are required (Debian: apt-get install dbus gnome-keyring)');
  process.exit(1);
}

function run(file, args, extraEnv = {}, cleanup = () => undefined) {
  const child = spawn(file, args, { stdio: 'inherit', env: { ...process.env, ...extraEnv } });
  const forward = (signal) => child.kill(signal);
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);
  child.on('exit', (code, signal) => {
    cleanup();
    process.exit(code ?? (signal ? 1 : 0));
  });
}
