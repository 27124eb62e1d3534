import { spawn } from 'node:child_process';
import { WardError } from '../base/errors.js';

export type OpenBrowser = (url: URL) => Promise<void>;

/** What the system opener needs to reach the desktop session; nothing else crosses (R2). */
const ENV_ALLOWLIST = ['PATH', 'HOME', 'DISPLAY', 'WAYLAND_DISPLAY', 'XDG_RUNTIME_DIR', 'XDG_CURRENT_DESKTOP', 'XDG_DATA_DIRS', 'XDG_CONFIG_DIRS', 'DBUS_SESSION_BUS_ADDRESS', 'BROWSER', 'SystemRoot', 'windir', 'USERPROFILE'];

export function browserCommand(url: URL, platform: NodeJS.Platform = process.platform): { file: string; args: string[] } {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new WardError('invalid_config', 'only http and https URLs are opened in the browser');
  if (platform === 'darwin') return { file: 'open', args: [url.href] };
  if (platform === 'win32') return { file: 'rundll32.exe', args: ['url.dll,FileProtocolHandler', url.href] };
  return { file: 'xdg-open', args: [url.href] };
}

/** Opens the system browser with an argv array (never a shell); the URL carries no secret. */
export const openSystemBrowser: OpenBrowser = (url) => {
  const { file, args } = browserCommand(url);
  const env: NodeJS.ProcessEnv = {};
  for (const name of ENV_ALLOWLIST) if (process.env[name] !== undefined) env[name] = process.env[name];
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env, stdio: 'ignore', detached: true });
    child.once('error', (error) => reject(new WardError('invalid_config', `could not start ${file}: ${error.message}`, { cause: error })));
    child.once('spawn', () => {
      child.unref();
      resolve();
    });
  });
};
