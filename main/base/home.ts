import os from 'node:os';
import path from 'node:path';

/**
 * The data folder. `WARD_HOME` overrides the per-OS default, which matches Electron's
 * `app.getPath('userData')` for an app named "Ward" so the desktop app and the `ward`
 * command share one folder.
 */
export function resolveWardHome(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string {
  const override = env.WARD_HOME;
  if (override !== undefined && override !== '') return path.resolve(override);
  const home = os.homedir();
  switch (platform) {
    case 'darwin':
      return path.join(home, 'Library', 'Application Support', 'Ward');
    case 'win32':
      return path.join(env.APPDATA ?? path.join(home, 'AppData', 'Roaming'), 'Ward');
    default:
      return path.join(env.XDG_CONFIG_HOME || path.join(home, '.config'), 'Ward');
  }
}
